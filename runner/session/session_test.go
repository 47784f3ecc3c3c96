package session

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/builtin"
	"reasonix/config"
	"reasonix/goals"
	"reasonix/policy"
)

func newSession(t *testing.T, set *config.Config, mod func(*Config)) *Session {
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
	s := newSession(t, nil, nil)
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

func TestShellEnvHoldsNoNamedSecret(t *testing.T) {
	t.Setenv("SESSION_TEST_KEY", "sk-123")
	t.Setenv("SESSION_TEST_PLAIN", "fine")
	set := config.Default()
	set.Providers = []config.Provider{{Name: "p", APIKeyEnv: "SESSION_TEST_KEY"}}
	env := strings.Join(ShellEnv(set), "\n")
	if strings.Contains(env, "sk-123") || !strings.Contains(env, "SESSION_TEST_PLAIN=fine") {
		t.Fatalf("env:\n%s", env)
	}

}
