package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadDefaultsWhenNothingExists(t *testing.T) {
	f := newFixture(t)
	c := f.load()
	if len(c.Providers) != 0 || len(c.Sources()) != 0 {
		t.Fatalf("providers %v sources %v, want none", c.Providers, c.Sources())
	}
	if c.Agent.MaxSteps != 100 || c.Agent.MaxSubagentConcurrency != 6 || c.Agent.MaxParallelWriters != 3 ||
		c.Agent.Temperature != nil || c.Tools.BashTimeoutSeconds != 120 || c.Tools.MCPStartupTimeoutSeconds != 30 ||
		c.Tools.MCPCallTimeoutSeconds != 300 || c.Permissions.Mode != "ask" || c.Permissions.Posture != "ask" ||
		c.Sandbox.Bash != "auto" || c.Store.Driver != "sqlite" || c.Runner.MaxConcurrentTasks != 4 ||
		c.Runner.TaskTimeout != 2*time.Hour || c.Runner.ApprovalTTL != TTL(30*time.Minute) ||
		c.Serve.Addr != "127.0.0.1:8080" {
		t.Errorf("defaults not applied: %+v", c)
	}
	if c.DataDir() != f.home {
		t.Errorf("DataDir = %q, want %q", c.DataDir(), f.home)
	}
	if _, err := c.ResolveModel(""); !errors.Is(err, ErrNoProviders) {
		t.Errorf("ResolveModel with no providers: %v, want ErrNoProviders", err)
	}
}

func TestLoadPrecedence(t *testing.T) {
	f := newFixture(t)
	user := f.user(`
[agent]
max_steps = 10
max_subagent_concurrency = 2
[tools]
bash_timeout_seconds = 5
`)
	proj := f.proj(`
[agent]
max_steps = 20
[tools]
bash_timeout_seconds = 0
`)
	c := f.load()
	if c.Agent.MaxSteps != 20 || c.Origin("agent.max_steps") != proj {
		t.Errorf("max_steps = %d from %q, want 20 from project", c.Agent.MaxSteps, c.Origin("agent.max_steps"))
	}
	if c.Agent.MaxSubagentConcurrency != 2 || c.Origin("agent.max_subagent_concurrency") != user {
		t.Errorf("max_subagent_concurrency = %d from %q, want 2 from user", c.Agent.MaxSubagentConcurrency, c.Origin("agent.max_subagent_concurrency"))
	}
	if c.Tools.BashTimeoutSeconds != 0 {
		t.Errorf("explicit 0 in project should override user's 5, got %d", c.Tools.BashTimeoutSeconds)
	}
	if c.Agent.MaxParallelWriters != 3 || c.Origin("agent.max_parallel_writers") != "" {
		t.Errorf("untouched key should keep default with no origin")
	}
	if got, want := c.Sources(), []string{user, proj}; !slices.Equal(got, want) {
		t.Errorf("Sources = %q, want %q", got, want)
	}

	// A flag applied by the caller sits on top and is blamed by Validate.
	c.Agent.MaxSteps = 30
	c.SetOrigin("agent.max_steps", "--max-steps flag")
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate after flag: %v", err)
	}
	c.Agent.MaxSteps = -1
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted max_steps = -1")
	}
	wantContains(t, err.Error(), "config: --max-steps flag: agent.max_steps: must be between 1 and 100000 (got -1)")
}

func TestLoadProjectFileChoice(t *testing.T) {
	f := newFixture(t)
	alt := f.write(filepath.Join(f.project, ".reasonix", "reasonix.toml"), "[agent]\nmax_steps = 7\ngoal_max_turns = 9\n")
	c := f.load()
	if c.Agent.MaxSteps != 7 || !slices.Equal(c.Sources(), []string{alt}) {
		t.Fatalf("alt project file not used: steps %d sources %q", c.Agent.MaxSteps, c.Sources())
	}
	root := f.proj("[agent]\nmax_steps = 8\n")
	c = f.load()
	if c.Agent.MaxSteps != 8 || c.Agent.GoalMaxTurns != 0 || !slices.Equal(c.Sources(), []string{root}) {
		t.Fatalf("root file must win without merging the alt file: steps %d turns %d sources %q",
			c.Agent.MaxSteps, c.Agent.GoalMaxTurns, c.Sources())
	}
	// A malformed root file is an error; there is no fallback to the alt file.
	f.proj("x = = 1\n")
	wantContains(t, f.loadErr(), root, "line 1")
}

func TestLoadUnreadableProjectFileIsAnError(t *testing.T) {
	f := newFixture(t)
	// A directory where the file should be cannot be read as a config.
	if err := os.MkdirAll(filepath.Join(f.project, ProjectFile), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(f.project, ".reasonix", "reasonix.toml"), "")
	wantContains(t, f.loadErr(), filepath.Join(f.project, ProjectFile), "not a regular file")
}

func TestLoadExplicitFile(t *testing.T) {
	f := newFixture(t)
	f.user("[agent]\nmax_steps = 10\ngoal_max_turns = 4\n")
	f.proj("[agent]\nmax_steps = 20\n")
	explicit := f.write(filepath.Join(t.TempDir(), "custom.toml"), "[agent]\nmax_steps = 30\n")
	o := f.opts()
	o.File = explicit
	c, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.MaxSteps != 30 || c.Agent.GoalMaxTurns != 4 {
		t.Errorf("--config must replace the project file but keep the user file: steps %d turns %d", c.Agent.MaxSteps, c.Agent.GoalMaxTurns)
	}
	o.File = filepath.Join(t.TempDir(), "missing.toml")
	_, err = Load(o)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing.toml") {
		t.Errorf("missing --config file: %v", err)
	}
}

func TestLoadReasonixHome(t *testing.T) {
	f := newFixture(t)
	custom := t.TempDir()
	f.write(filepath.Join(custom, UserFile), "[agent]\nmax_steps = 11\n")
	f.user("[agent]\nmax_steps = 99\n") // must be ignored: REASONIX_HOME replaces it
	f.env["REASONIX_HOME"] = custom
	o := f.opts()
	o.Home = ""
	c, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.MaxSteps != 11 || c.DataDir() != custom {
		t.Errorf("REASONIX_HOME: steps %d data dir %q, want 11 and %q", c.Agent.MaxSteps, c.DataDir(), custom)
	}

	delete(f.env, "REASONIX_HOME")
	h := t.TempDir()
	f.env["HOME"] = h
	f.write(filepath.Join(h, ".reasonix", UserFile), "[store]\npath = \"state\"\n")
	c, err = Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(h, ".reasonix", "state"); c.DataDir() != want {
		t.Errorf("DataDir = %q, want store.path resolved against its file: %q", c.DataDir(), want)
	}
}

func TestLoadUnknownKeys(t *testing.T) {
	f := newFixture(t)
	p := f.proj(`
defualt_model = "x"
[agent]
temprature = 0.5
[[providers]]
name = "p"
model = "m"
modle = "n"
[gui]
theme = "dark"
`)
	got := f.loadErr()
	for _, k := range []string{"defualt_model", "agent.temprature", "providers.modle", "gui"} {
		wantContains(t, got, "config: "+p+": unknown key \""+k+"\"")
	}
	if strings.Contains(got, "gui.theme") {
		t.Errorf("an unknown table should be reported once, got %q", got)
	}
}

func TestLoadSyntaxAndTypeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"syntax", "[agent]\nmax_steps = 3\nmax_steps = = 4\n", []string{"line 3, column 13"}},
		{"type", "[agent]\n\nmax_steps = \"many\"\n", []string{"line 3", `agent.max_steps`, "incompatible types"}},
		{"type in entry", "[[providers]]\nname = \"p\"\nmodel = \"m\"\ncontext_window = 1.5\n", []string{"providers.context_window"}},
		{"bad duration", "[runner]\ntask_timeout = \"two hours\"\n", []string{"line 2", "runner.task_timeout", "invalid duration"}},
		{"integer duration", "[runner]\napproval_ttl = 30\n", []string{"runner.approval_ttl", "duration string"}},
		{"both prompts", "[agent]\nsystem_prompt = \"a\"\nsystem_prompt_file = \"b\"\n", []string{"not both"}},
		{"missing prompt file", "[agent]\nsystem_prompt_file = \"nope.md\"\n", []string{"agent.system_prompt_file", "nope.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.proj(tc.file)
			wantContains(t, f.loadErr(), append(tc.want, "config: "+p)...)
		})
	}
}

// TestLoadReportsEveryTypeError: a key of the wrong type does not hide
// the others (the decoder stops at the first): each is reported with its
// line and key, in the file's order, across tables and the entries of an
// array of tables; keys of the right type are not blamed.
func TestLoadReportsEveryTypeError(t *testing.T) {
	f := newFixture(t)
	p := f.proj(`[agent]
max_steps = "many"
effort = "high"

[runner]
max_concurrent_tasks = "four"
task_timeout = "two hours"

[[workspaces]]
name = "a"
repo = "git@example.com:org/a.git"

[[workspaces]]
name = 7
repo = "git@example.com:org/b.git"

[permissions]
allow = "Bash(ls)"
`)
	got := f.loadErr()
	wants := []string{`line 2`, `agent.max_steps`, `runner.max_concurrent_tasks`, `line 7`, `runner.task_timeout`, `invalid duration`,
		`workspaces.name`, `permissions.allow`}
	wantContains(t, got, wants...)
	last := -1
	for _, w := range []string{`agent.max_steps`, `runner.max_concurrent_tasks`, `runner.task_timeout`, `workspaces.name`, `permissions.allow`} {
		i := strings.Index(got, w)
		if i < last {
			t.Errorf("%q is reported out of the file's order:\n%s", w, got)
		}
		last = i
	}
	if n := strings.Count(got, "config: "+p); n != 5 {
		t.Errorf("%d problems reported, want 5:\n%s", n, got)
	}
	for _, right := range []string{"agent.effort", `"repo"`} {
		if strings.Contains(got, right) {
			t.Errorf("a key of the right type (%s) is blamed:\n%s", right, got)
		}
	}
}

func TestLoadEntriesMergeByName(t *testing.T) {
	f := newFixture(t)
	user := f.user(`
[[providers]]
name = "a"
model = "user-a"
api_key_env = "A_KEY"
[[providers]]
name = "b"
model = "user-b"
[[workspaces]]
name = "w"
repo = "git@example.com:org/repo.git"
`)
	proj := f.proj(`
[[providers]]
name = "a"
models = ["proj-a1", "proj-a2"]
[[providers]]
name = "c"
model = "proj-c"
`)
	c := f.load()
	var got []string
	for _, p := range c.Providers {
		got = append(got, p.Name+"="+strings.Join(p.ModelList(), "+")+"@"+filepath.Base(filepath.Dir(p.Source)))
	}
	want := []string{"a=proj-a1+proj-a2@proj", "b=user-b@home", "c=proj-c@proj"}
	if !slices.Equal(got, want) {
		t.Errorf("providers = %q, want %q", got, want)
	}
	if c.Providers[0].APIKeyEnv != "" {
		t.Errorf("a project entry must replace the user entry whole, got api_key_env %q", c.Providers[0].APIKeyEnv)
	}
	if c.Providers[0].Kind != "openai" || c.Providers[0].IdleTimeoutSeconds != 300 {
		t.Errorf("entry defaults not applied: %+v", c.Providers[0])
	}
	if w := c.Workspaces[0]; w.Base != "main" || w.Source != user || w.Repo != "git@example.com:org/repo.git" {
		t.Errorf("workspace = %+v", w)
	}
	f.proj("[[providers]]\nname = \"a\"\nmodel = \"x\"\n[[providers]]\nname = \"a\"\nmodel = \"y\"\n")
	wantContains(t, f.loadErr(), "config: "+proj+": providers[a].name: \"a\" is declared twice")
}

func TestLoadRelativePaths(t *testing.T) {
	f := newFixture(t)
	alt := filepath.Join(f.project, ".reasonix")
	f.write(filepath.Join(alt, "prompts", "sys.md"), "be brief")
	f.write(filepath.Join(alt, "reasonix.toml"), `
[agent]
system_prompt_file = "prompts/sys.md"
[sandbox]
workspace_root = "../src"
[[workspaces]]
name = "local"
repo = "../repo"
`)
	c := f.load()
	if c.Agent.SystemPrompt != "be brief" || c.Agent.SystemPromptFile != filepath.Join(alt, "prompts", "sys.md") {
		t.Errorf("system prompt = %q from %q", c.Agent.SystemPrompt, c.Agent.SystemPromptFile)
	}
	if want := filepath.Join(f.project, "src"); c.Sandbox.WorkspaceRoot != want {
		t.Errorf("workspace_root = %q, want %q", c.Sandbox.WorkspaceRoot, want)
	}
	if want := filepath.Join(f.project, "repo"); c.Workspaces[0].Repo != want {
		t.Errorf("repo = %q, want %q", c.Workspaces[0].Repo, want)
	}
}

func TestLoadSystemPromptLayers(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.home, "p.md"), "from user file")
	f.user("[agent]\nsystem_prompt_file = \"p.md\"\n")
	if c := f.load(); c.Agent.SystemPrompt != "from user file" {
		t.Fatalf("user prompt file not read: %q", c.Agent.SystemPrompt)
	}
	// An inline prompt in a higher layer wins over a lower layer's file.
	f.proj("[agent]\nsystem_prompt = \"inline\"\n")
	c := f.load()
	if c.Agent.SystemPrompt != "inline" || c.Agent.SystemPromptFile != "" {
		t.Errorf("prompt = %q file %q, want the project's inline prompt", c.Agent.SystemPrompt, c.Agent.SystemPromptFile)
	}
}

func TestLoadRejectsMiscasedKeys(t *testing.T) {
	f := newFixture(t)
	p := f.proj(`
[Agent]
max_steps = 5
[tools]
Bash_Timeout_Seconds = 1
[[providers]]
name = "p"
Model = "m"
model_overrides = { m = { Context_Window = 5 } }
[[plugins]]
name = "x"
command = "c"
env = { lower_case = "kept" }
`)
	got := f.loadErr()
	wantContains(t, got,
		"config: "+p+`: unknown key "Agent" (keys are case-sensitive: write "agent")`,
		`unknown key "tools.Bash_Timeout_Seconds"`,
		`unknown key "providers.Model"`,
		`unknown key "providers.model_overrides.m.Context_Window"`)
	if strings.Contains(got, "Agent.max_steps") || strings.Contains(got, "lower_case") {
		t.Errorf("reported too much: %s", got)
	}
}

func TestLoadPermissionRulesAccumulate(t *testing.T) {
	f := newFixture(t)
	f.user("[permissions]\ndeny = [\"Bash(rm:*)\"]\nallow = [\"Bash(go test:*)\"]\nmode = \"deny\"\n")
	f.proj("[permissions]\ndeny = [\"Bash(git push:*)\"]\nmode = \"ask\"\n")
	c := f.load()
	if got := strings.Join(c.Permissions.Deny, ","); got != "Bash(rm:*),Bash(git push:*)" {
		t.Errorf("deny = %q: a project file dropped the user's deny rules", got)
	}
	if got := strings.Join(c.Permissions.Allow, ","); got != "Bash(go test:*)" {
		t.Errorf("allow = %q", got)
	}
	if c.Permissions.Mode != "ask" {
		t.Errorf("mode = %q: scalars still override", c.Permissions.Mode)
	}
}
