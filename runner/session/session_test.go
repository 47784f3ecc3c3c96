package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/builtin"
	"reasonix/config"
	"reasonix/goals"
	"reasonix/internal/redact"
	"reasonix/internal/testenv"
	"reasonix/policy"
)

func newSession(t testing.TB, set *config.Config, mod func(*Config)) *Session {
	t.Helper()
	if set == nil {
		set = config.Default()
	}
	cfg := Config{
		Settings: set,
		Workdir:  t.TempDir(),
		Model:    Model{Provider: agenttest.NewScriptedProvider(), Name: "m", MaxTokens: 77},
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func writeCall(path string) agent.Call {
	args, _ := json.Marshal(map[string]string{"path": path, "content": "x"})
	return agent.Call{ID: "1", Tool: "write_file", Args: args}
}

// The parent's calls that need a person go to the approver; a sub-agent's
// never do: they are refused as unattended on every path.
func TestSubAgentsAreNeverAskedFor(t *testing.T) {
	var asked atomic.Int32
	approver := policy.ApproverFunc(func(context.Context, policy.Request) (policy.Answer, error) {
		asked.Add(1)
		return policy.Answer{Choice: policy.AllowOnce}, nil
	})
	s := newSession(t, nil, func(c *Config) { c.Approver = approver })
	v, err := s.Agent.Gate.Authorize(t.Context(), writeCall("a.txt"))
	if err != nil || !v.Allowed || asked.Load() != 1 {
		t.Fatalf("parent: verdict %+v, err %v, asked %d", v, err, asked.Load())
	}
	g, err := s.Goal(GoalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.child(goals.ChildSpec{ID: "c", Ref: "r1", Writer: true}, GoalConfig{}, g.childGate, false)
	if err != nil {
		t.Fatal(err)
	}
	v, err = child.Gate.Authorize(t.Context(), writeCall("b.txt"))
	if err != nil || v.Allowed || v.Code != agent.RefusedUnattended || asked.Load() != 1 {
		t.Fatalf("child: verdict %+v, err %v, asked %d", v, err, asked.Load())
	}
	if child.SystemPrompt != goals.ChildSystemPrompt || child.MaxTokens != 77 || child.Model != "m" {
		t.Fatalf("child config: prompt %q, max tokens %d, model %q", child.SystemPrompt[:20], child.MaxTokens, child.Model)
	}
}

// In the approved-plan window a sub-agent's ordinary writes are allowed
// like the parent's; explicit ask rules still are not.
func TestSubAgentsShareTheApprovedPlanWindow(t *testing.T) {
	set := config.Default()
	set.Permissions.Ask = []string{"Edit(secret.txt)"}
	s := newSession(t, set, nil)
	g, err := s.Goal(GoalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.child(goals.ChildSpec{ID: "c", Ref: "r1", Writer: true}, GoalConfig{}, g.childGate, true)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := child.Gate.Authorize(t.Context(), writeCall("a.txt")); !v.Allowed {
		t.Fatalf("ordinary write in the plan window: %+v", v)
	}
	if v, _ := child.Gate.Authorize(t.Context(), writeCall("secret.txt")); v.Allowed {
		t.Fatal("an explicit ask rule was bypassed in the plan window")
	}
}

// Without an OS sandbox a claimed writer cannot be held to its claim in
// bash, so it gets no bash; the parent and unclaimed children keep it.
func TestClaimedWriterLosesUnsandboxedBash(t *testing.T) {
	set := config.Default()
	set.Sandbox.Bash = config.BashOff // auto, the default, may find a sandbox here
	s := newSession(t, set, nil)
	if _, ok := s.Agent.Tools.Get("bash"); !ok {
		t.Fatal("the parent has no bash")
	}
	g, _ := s.Goal(GoalConfig{})
	claimed, err := s.child(goals.ChildSpec{ID: "c", Ref: "r1", Writer: true, WritePaths: []string{"src"}}, GoalConfig{}, g.childGate, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := claimed.Tools.Get("bash"); ok {
		t.Fatal("a claimed writer kept unsandboxed bash")
	}
	whole, _ := s.child(goals.ChildSpec{ID: "d", Ref: "r2", Writer: true}, GoalConfig{}, g.childGate, false)
	if _, ok := whole.Tools.Get("bash"); !ok {
		t.Fatal("a whole-workspace writer lost bash")
	}
}

func TestNewAppliesTheConfiguration(t *testing.T) {
	set := config.Default()
	set.Tools.Enabled = []string{"read_file", "bash", "todo_write"}
	set.Agent.MaxSteps = 9
	var events []agent.EventType
	var wrapped bool
	s := newSession(t, set, func(c *Config) {
		c.MaxSteps = 3
		c.Observer = func(e agent.Event) { events = append(events, e.Type) }
		c.WrapTools = func(r *agent.ToolRegistry) (*agent.ToolRegistry, error) { wrapped = true; return r, nil }
	})
	if names := s.Agent.Tools.Names(); !slices.Equal(names, []string{"bash", "read_file", "todo_write"}) || !wrapped {
		t.Fatalf("tools %v, wrapped %v", names, wrapped)
	}
	if s.Agent.MaxSteps != 3 || s.Agent.SystemPrompt != agent.DefaultSystemPrompt || s.Agent.MaxTokens != 77 {
		t.Fatalf("agent config: steps %d, max tokens %d", s.Agent.MaxSteps, s.Agent.MaxTokens)
	}
	// todo_write's plan reaches the session's observer.
	todo, _ := s.Agent.Tools.Get("todo_write")
	if _, err := todo.Execute(t.Context(), json.RawMessage(`{"todos":[{"content":"a","status":"pending"}]}`)); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(events, agent.EventPlanUpdated) {
		t.Fatalf("events %v", events)
	}
}

func TestNewNamesTheBadSection(t *testing.T) {
	set := config.Default()
	set.Permissions.Deny = []string{"Bash(unclosed"}
	_, err := New(t.Context(), Config{Settings: set, Workdir: t.TempDir(), Model: Model{Provider: agenttest.NewScriptedProvider()}})
	if err == nil || !strings.HasPrefix(err.Error(), "[permissions]: ") {
		t.Fatalf("err = %v", err)
	}
	set = config.Default()
	set.Tools.Enabled = []string{"no_such_tool"}
	_, err = New(t.Context(), Config{Settings: set, Workdir: t.TempDir(), Model: Model{Provider: agenttest.NewScriptedProvider()}})
	if err == nil || !strings.HasPrefix(err.Error(), "[tools] enabled: ") {
		t.Fatalf("err = %v", err)
	}
}

// The shell sees an allowlist: none of a list of planted secrets, even
// one pass_env names when the configuration reads a key from it.
func TestShellEnvIsAnAllowlist(t *testing.T) {
	planted := map[string]string{
		"AWS_SECRET_ACCESS_KEY": "aws-secret", "GITHUB_TOKEN": "gh-secret", "SESSION_TEST_KEY": "sk-123",
		"PLUGIN_TOKEN": "plugin-secret", "DATABASE_URL": "postgres://u:pw@h/db",
	}
	for k, v := range planted {
		t.Setenv(k, v)
	}
	t.Setenv("LC_ALL", "C.UTF-8")
	t.Setenv("EXTRA_OK", "fine")
	set := config.Default()
	set.Providers = []config.Provider{{Name: "p", APIKeyEnv: "SESSION_TEST_KEY"}}
	set.Tools.Shell.PassEnv = []string{"EXTRA_OK", "SESSION_TEST_KEY"}
	set.Tools.Shell.Env = map[string]string{"GOFLAGS": "-mod=mod"}
	env := ShellEnv(set)
	joined := strings.Join(env, "\n")
	for k, v := range planted {
		if strings.Contains(joined, v) {
			t.Errorf("the shell sees %s", k)
		}
	}
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C.UTF-8", "EXTRA_OK=fine", "GOFLAGS=-mod=mod"} {
		if !slices.Contains(env, want) {
			t.Errorf("the shell lacks %s", want)
		}
	}
	if setup := strings.Join(SetupEnv(set), "\n"); strings.Contains(setup, "sk-123") || !strings.Contains(setup, "gh-secret") {
		t.Error("setup commands must keep the process environment without the configuration's secrets")
	}
}

// Credentials and Reasonix's own secrets are unreadable by the file tools,
// directly and through a symlink planted in the workspace.
func TestSecretsAreUnreadable(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.WriteFile(key, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	token := filepath.Join(data, "api-token")
	if err := os.WriteFile(token, []byte("rx-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	set := config.Default()
	set.Store.Path = data
	var ws string
	s := newSession(t, set, func(c *Config) { ws = c.Workdir })
	if err := os.Symlink(key, filepath.Join(ws, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	read, _ := s.Agent.Tools.Get("read_file")
	for _, p := range []string{key, token, "innocent.txt", "/etc/shadow"} {
		args, _ := json.Marshal(map[string]string{"path": p})
		out, err := read.Execute(t.Context(), args)
		if err == nil || strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "rx-token") {
			t.Errorf("read_file %s: %q, %v", p, out, err)
		}
	}
}

// The bash tool a session builds is confined by the OS sandbox by default:
// it writes inside the workspace only and cannot read hidden paths.
func TestSessionBashIsSandboxedByDefault(t *testing.T) {
	home, outside := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	key := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ws string
	s := newSession(t, nil, func(c *Config) { ws = c.Workdir })
	if s.Confinement.SandboxKind() == "" {
		t.Skip("no OS sandbox on this host")
	}
	bash, _ := s.Agent.Tools.Get("bash")
	run := func(cmd string) string {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		out, err := bash.Execute(t.Context(), args)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	run("echo in > inside.txt; echo out > " + outside + "/escaped.txt; cat " + key)
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Errorf("the workspace was not writable: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped.txt")); err == nil {
		t.Errorf("bash (%s) wrote outside the workspace", s.Confinement.SandboxKind())
	}
	if out := run("cat " + key); strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("bash (%s) read a hidden path: %s", s.Confinement.SandboxKind(), out)
	}
}

// Inside the sandbox the build tools write to Reasonix's own cache, so a
// task's `go build` works while the user's caches stay read-only.
func TestSandboxedBuildToolsGetAWritableCache(t *testing.T) {
	set := config.Default()
	set.Store.Path = t.TempDir()
	set.Tools.Shell.Env = map[string]string{"PIP_CACHE_DIR": "/mine"}
	s := newSession(t, set, nil)
	bash, _ := s.Agent.Tools.Get("bash")
	out, err := bash.Execute(t.Context(), json.RawMessage(`{"command":"mkdir -p \"$GOCACHE\" && touch \"$GOCACHE/x\" && echo ok $PIP_CACHE_DIR"}`))
	if err != nil || !strings.Contains(out, "ok /mine") {
		t.Fatalf("%q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(set.Store.Path, "cache", "local", "go-build", "x")); err != nil {
		t.Fatalf("the cache was not written: %v", err)
	}
}

// Each principal's tasks write their own build cache: a module source one
// requester's task plants cannot reach another requester's task.
func TestBuildCachesArePerPrincipal(t *testing.T) {
	set := config.Default()
	set.Store.Path = t.TempDir()
	caches := map[string]string{}
	for _, who := range []string{"webhook:issues", "api:alice"} {
		s := newSession(t, set, func(c *Config) { c.CacheScope = who })
		if !s.Confinement.ShellSandboxed() {
			testenv.Missing(t, "bwrap", "no OS sandbox: nothing keeps one principal's cache from another's")
		}
		bash, _ := s.Agent.Tools.Get("bash")
		out, err := bash.Execute(t.Context(), json.RawMessage(`{"command":"mkdir -p \"$GOMODCACHE\" && echo planted > \"$GOMODCACHE/mod.go\" && echo $GOMODCACHE"}`))
		if err != nil || !strings.Contains(out, "exit code: 0") {
			t.Fatalf("%s: %q, %v", who, out, err)
		}
		caches[who] = strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	}
	alice, hook := caches["api:alice"], caches["webhook:issues"]
	if alice == hook || filepath.Dir(filepath.Dir(alice)) != filepath.Dir(filepath.Dir(hook)) {
		t.Fatalf("the caches are %q and %q; want two directories side by side", alice, hook)
	}
	// The webhook's task tries to plant into alice's cache.
	s := newSession(t, set, func(c *Config) { c.CacheScope = "webhook:issues" })
	bash, _ := s.Agent.Tools.Get("bash")
	out, _ := bash.Execute(t.Context(), json.RawMessage(`{"command":"echo evil > `+alice+`/mod.go; echo evil > `+alice+`/new.go"}`))
	if b, err := os.ReadFile(filepath.Join(alice, "mod.go")); err != nil || string(b) != "planted\n" {
		t.Errorf("alice's cache was rewritten by another principal's task: %q, %v (%s)", b, err, out)
	}
	if _, err := os.Stat(filepath.Join(alice, "new.go")); err == nil {
		t.Errorf("another principal's task added a file to alice's cache (%s)", out)
	}
}

// A tool error that mentions a secret is masked but still says what kind of
// error it is.
func TestToolErrorsAreMaskedNotRetyped(t *testing.T) {
	const secret = "sk-session-secret-42"
	failing := agent.NewToolRegistry()
	if err := failing.Add(stubTool{err: fmt.Errorf("dial with %s: %w", secret, context.Canceled)}); err != nil {
		t.Fatal(err)
	}
	reg, err := redactTools(failing, redact.New(secret))
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := reg.Get("stub")
	_, err = tool.Execute(t.Context(), nil)
	if err == nil || strings.Contains(err.Error(), secret) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

type stubTool struct{ err error }

func (stubTool) Name() string            { return "stub" }
func (stubTool) Description() string     { return "stub" }
func (stubTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (s stubTool) Execute(context.Context, json.RawMessage) (string, error) {
	return "", s.err
}

// TestSetPostureReachesSubAgentGates: SetPosture changes the session's
// gate and the sub-agents' gates, the one made before the change
// included; a bad posture changes nothing.
func TestSetPostureReachesSubAgentGates(t *testing.T) {
	s := newSession(t, nil, nil)
	before, err := s.newChildGate()
	if err != nil {
		t.Fatal(err)
	}
	check := func(when, want string) {
		t.Helper()
		after, err := s.newChildGate()
		if err != nil {
			t.Fatal(err)
		}
		for name, g := range map[string]agent.Gate{"session": s.Agent.Gate, "earlier child": before, "later child": after} {
			if v, err := g.Authorize(t.Context(), writeCall("a.txt")); err != nil || v.Code != want {
				t.Errorf("%s, %s gate: %q %v, want %q", when, name, v.Code, err, want)
			}
		}
	}
	check("ask", agent.RefusedUnattended)
	if err := s.SetPosture(policy.PostureAuto); err != nil || s.Posture() != policy.PostureAuto {
		t.Fatalf("SetPosture(auto): %v, now %q", err, s.Posture())
	}
	check("auto", "")
	if err := s.SetPosture("everything"); err == nil || s.Posture() != policy.PostureAuto {
		t.Errorf("a bad posture: %v, now %q", err, s.Posture())
	}
	if err := s.SetPosture(policy.PostureAsk); err != nil {
		t.Fatal(err)
	}
	check("back to ask", agent.RefusedUnattended)
}
