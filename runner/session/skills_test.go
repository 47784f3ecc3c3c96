package session

import (
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/agent/recipe"
	"reasonix/goals"
	"reasonix/policy"
)

func testSkillSet() *recipe.Skills {
	return recipe.LoadSkills(recipe.SkillOptions{}, recipe.Layer{Scope: recipe.ScopeProject, Files: []recipe.File{
		{Path: "review/SKILL.md", Data: []byte("---\ndescription: Review the change\n---\nReview $ARGUMENTS for bugs.")},
		{Path: "explorer/SKILL.md", Data: []byte("---\nrunAs: subagent\ndescription: Map the code\nread-only: true\n---\nYou explore and report.")},
	}})
}

// The index ends the parent's system prompt and is the same bytes on
// every request; run_skill renders an inline skill into the conversation
// and runs a sub-agent skill as its profile, whose answer comes back.
func TestSkillsInPromptAndTools(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "r", Name: "run_skill", Arguments: `{"name":"review","arguments":"pkg/store"}`}}},
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "e", Name: "run_skill", Arguments: `{"name":"explorer","arguments":"map pkg/store"}`}}},
		agenttest.Turn{Text: "the store has three files"}, // the explorer's answer
		agenttest.Turn{Text: "done"},
	)
	s := newSession(t, nil, func(c *Config) {
		c.Skills = testSkillSet()
		c.Model.Provider = p
		c.Posture = policy.PostureAuto
	})
	if !strings.HasSuffix(s.Agent.SystemPrompt, testSkillSet().Index()) || !strings.Contains(s.Agent.SystemPrompt, "- explorer (sub-agent): Map the code\n") {
		t.Fatalf("system prompt lacks the index:\n%s", s.Agent.SystemPrompt)
	}
	names := s.Agent.Tools.Names()
	if !slices.Contains(names, "read_skill") || !slices.Contains(names, "run_skill") {
		t.Fatalf("tools = %v", names)
	}
	if _, ok := s.cfg.Profiles.Lookup("explorer"); !ok {
		t.Fatal("a runAs: subagent skill is no profile")
	}
	a, err := agent.New(s.Agent)
	if err != nil {
		t.Fatal(err)
	}
	res := a.Run(t.Context(), "review the store")
	if res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("outcome %s: %v", res.Outcome, res.Err)
	}
	reqs := p.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	parent := []agenttest.Request{reqs[0], reqs[1], reqs[3]}
	for _, r := range parent[1:] {
		if r.Messages[0].Content != parent[0].Messages[0].Content {
			t.Fatal("the system prompt changed between requests: the prompt cache would miss")
		}
	}
	child := reqs[2]
	if child.Messages[0].Content != "You explore and report." || child.Messages[1].Content != "map pkg/store" {
		t.Fatalf("child request = %q / %q", child.Messages[0].Content, child.Messages[1].Content)
	}
	for _, tl := range child.Tools {
		if tl.Name == "run_skill" || tl.Name == "read_skill" || tl.Name == "write_file" {
			t.Fatalf("the read-only sub-agent has %s", tl.Name)
		}
	}
	var results []string
	for _, m := range reqs[3].Messages {
		if m.Role == agent.RoleTool {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "Review pkg/store for bugs.") ||
		!strings.Contains(results[1], "the store has three files") {
		t.Fatalf("tool results = %q", results)
	}
}

// A fleet's children get no skill tools: the parent's skills are not
// their brief.
func TestChildrenHaveNoSkillTools(t *testing.T) {
	s := newSession(t, nil, func(c *Config) { c.Skills = testSkillSet() })
	g, err := s.Goal(GoalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.child(goals.ChildSpec{ID: "c", Ref: "r1", Writer: true}, GoalConfig{}, g.childGate, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := child.Tools.Names(); slices.Contains(n, "read_skill") || slices.Contains(n, "run_skill") {
		t.Fatalf("child tools = %v", n)
	}
	if strings.Contains(child.SystemPrompt, "## Skills") {
		t.Fatal("the index reached a child's prompt")
	}
}
