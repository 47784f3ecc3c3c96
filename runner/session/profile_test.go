package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/goals"
	"reasonix/policy"
)

func testProfiles() *recipe.Profiles {
	return recipe.LoadProfiles(recipe.Layer{Scope: recipe.ScopeProject, Files: []recipe.File{
		{Path: "reviewer/SKILL.md", Data: []byte("---\nrunAs: subagent\nread-only: true\n---\nYou only review.")},
		{Path: "editor/SKILL.md", Data: []byte("---\nrunAs: subagent\nallowed-tools: read_file, write_file\n---\nYou edit.")},
	}})
}

// A read-only profile's child has no writer and its gate refuses one,
// even under yolo and when the fleet item claimed write_paths; when its
// model still asks for write_file, nothing is written.
func TestReadOnlyProfileChildCannotWrite(t *testing.T) {
	var workdir string
	s := newSession(t, nil, func(c *Config) {
		c.Posture = policy.PostureYolo
		c.Profiles = testProfiles()
		workdir = c.Workdir
	})
	g, err := s.Goal(GoalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.readOnlyProfile("reviewer") || s.readOnlyProfile("editor") || s.readOnlyProfile("nope") {
		t.Fatal("ReadOnlyProfile does not follow the profiles")
	}
	spec := goals.ChildSpec{ID: "c", Ref: "r1", Profile: "reviewer", Writer: true, WritePaths: []string{"src"}}
	child, err := s.child(spec, GoalConfig{}, g.childGate, false)
	if err != nil {
		t.Fatal(err)
	}
	if child.SystemPrompt != "You only review." {
		t.Fatalf("system prompt = %q, want the profile body alone", child.SystemPrompt)
	}
	for _, name := range child.Tools.Names() {
		if tool, _ := child.Tools.Get(name); !agent.IsReadOnly(tool) {
			t.Fatalf("the read-only child has the writer %s", name)
		}
	}
	if v, _ := child.Gate.Authorize(t.Context(), writeCall("src/a.txt")); v.Allowed || v.Code != agent.RefusedByRule {
		t.Fatalf("write verdict = %+v", v)
	}
	child.Provider = agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"src/a.txt","content":"x"}`}}},
		agenttest.Turn{Text: "done"})
	a, err := agent.New(child)
	if err != nil {
		t.Fatal(err)
	}
	a.Run(t.Context(), "write src/a.txt")
	if _, err := os.Stat(filepath.Join(workdir, "src", "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("the read-only child wrote a file: %v", err)
	}
}

// allowed-tools is a ceiling: the child keeps only those tools, never more
// than a default child would have.
func TestAllowedToolsNarrowTheChild(t *testing.T) {
	set := config.Default()
	set.Tools.Enabled = []string{"read_file", "ls"} // the run itself has no write_file
	s := newSession(t, set, func(c *Config) { c.Profiles = testProfiles() })
	g, _ := s.Goal(GoalConfig{})
	child, err := s.child(goals.ChildSpec{ID: "c", Ref: "r1", Profile: "editor", Writer: true}, GoalConfig{}, g.childGate, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := child.Tools.Names(); slices.Contains(got, "write_file") || slices.Contains(got, "ls") || !slices.Contains(got, "read_file") {
		t.Fatalf("tools = %v: allowed-tools must only narrow", got)
	}
	if child.Model != "m" {
		t.Fatalf("model = %q, want the parent's without any model setting", child.Model)
	}
	if _, err := s.child(goals.ChildSpec{ID: "d", Ref: "r2", Profile: "missing"}, GoalConfig{}, g.childGate, false); err == nil || !strings.Contains(err.Error(), `"missing"`) {
		t.Fatalf("unknown profile: %v", err)
	}
}

// Through a real fleet: the item running the read-only profile claims
// write_paths and its model asks to write there, yet nothing is written;
// the default-profile item beside it writes its claim under the same
// posture, so the test can see a write when one happens.
func TestFleetReadOnlyProfileIgnoresWritePaths(t *testing.T) {
	turns := make([]agenttest.Turn, 20)
	for i := range turns {
		turns[i] = agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
			last := req.Messages[len(req.Messages)-1]
			if last.Role == agent.RoleTool {
				return agenttest.Turn{Text: "done"}
			}
			path := "other/rw.txt"
			if strings.Contains(last.Content, "review") {
				path = "src/ro.txt"
			}
			return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"` + path + `","content":"x"}`}}}
		})
	}
	var workdir string
	s := newSession(t, nil, func(c *Config) {
		c.Posture = policy.PostureYolo
		c.Profiles = testProfiles()
		c.Model.Provider = agenttest.NewScriptedProvider(turns...)
		workdir = c.Workdir
	})
	g, err := s.Goal(GoalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	graph, err := goals.Preflight(goals.FleetSpec{Items: []goals.FleetItem{
		{ID: "ro", Prompt: "review and write src/ro.txt", Profile: "reviewer", WritePaths: []string{"src"}},
		{ID: "rw", Prompt: "write other/rw.txt", WritePaths: []string{"other"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Host.RunFleet(t.Context(), graph); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(workdir, "src", "ro.txt")); !os.IsNotExist(err) {
		t.Fatalf("the read-only profile's child wrote inside its claimed write_paths: %v", err)
	}
	if _, err := os.Stat(filepath.Join(workdir, "other", "rw.txt")); err != nil {
		t.Fatalf("the ordinary child did not write its claim (the test could not see a write): %v", err)
	}
}

// Profiles are chosen by name in a fleet item, so their names and bodies
// must not reach the parent: not its prompt, not the goal tools' schemas.
// A model that saw them would learn of capabilities the team did not offer it.
func TestProfileNamesStayOutOfTheParent(t *testing.T) {
	var mu sync.Mutex
	var seen []agenttest.Request
	turns := make([]agenttest.Turn, 4)
	for i := range turns {
		turns[i] = agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
			mu.Lock()
			seen = append(seen, req)
			mu.Unlock()
			return agenttest.Turn{Text: "working on it"}
		})
	}
	set := config.Default()
	set.Agent.GoalMaxTurns = 1
	s := newSession(t, set, func(c *Config) {
		c.Profiles = testProfiles()
		c.Model.Provider = agenttest.NewScriptedProvider(turns...)
	})
	g, err := s.Goal(GoalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(t.Context(), goals.Goal{Objective: "tidy the repository"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the parent made no request: nothing was checked")
	}
	for _, req := range seen {
		b, err := json.Marshal(struct {
			Messages []agent.Message
			Tools    []agent.ToolSchema
		}{req.Messages, req.Tools})
		if err != nil {
			t.Fatal(err)
		}
		if len(req.Tools) == 0 {
			t.Fatal("the parent request has no tools: the schemas were not checked")
		}
		for _, leak := range []string{"reviewer", "editor", "You only review", "You edit"} {
			if strings.Contains(string(b), leak) {
				t.Errorf("the parent's request carries %q", leak)
			}
		}
	}
}
