package builtin

import (
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestReadSkillReturnsTheBodyAsWritten(t *testing.T) {
	env, _ := testEnv(t)
	out := mustCall(t, tool(t, env, "read_skill"), map[string]any{"name": "review"})
	if !strings.Contains(out, "Review $ARGUMENTS and list the bugs.") || !strings.Contains(out, "Description: Review a change") || !strings.Contains(out, "inline") {
		t.Fatalf("read_skill = %q", out)
	}
	out = mustCall(t, tool(t, env, "read_skill"), map[string]any{"name": "explorer"})
	if !strings.Contains(out, "sub-agent") || !strings.Contains(out, "You explore code.") {
		t.Fatalf("read_skill = %q", out)
	}
	wantErr(t, tool(t, env, "read_skill"), map[string]any{"name": "revew"}, "read_skill", `no skill "revew"`, "review")
}

func TestRunSkillRendersInlineAndRunsSubagents(t *testing.T) {
	env, _ := testEnv(t)
	skills := env.Skills.(*agenttest.Skills)
	out := mustCall(t, tool(t, env, "run_skill"), map[string]any{"name": "review", "arguments": "pkg/foo  pkg/bar"})
	if !strings.Contains(out, "<skill name=\"review\">\nReview pkg/foo pkg/bar and list the bugs.\n</skill>") {
		t.Fatalf("run_skill inline = %q", out)
	}
	if len(skills.Runs) != 0 {
		t.Fatalf("an inline skill started a sub-agent: %q", skills.Runs)
	}
	out = mustCall(t, tool(t, env, "run_skill"), map[string]any{"name": "explorer", "arguments": "map the store package"})
	if !strings.Contains(out, "done: map the store package") || len(skills.Runs) != 1 || skills.Runs[0] != "explorer: map the store package" {
		t.Fatalf("run_skill sub-agent = %q, runs %q", out, skills.Runs)
	}
	wantErr(t, tool(t, env, "run_skill"), map[string]any{"name": "explorer"}, "sub-agent skill", "task")
	if agent.IsReadOnly(tool(t, env, "run_skill")) {
		t.Fatal("run_skill may start a writer: it must not claim to be read-only")
	}
}

func TestSkillToolsNeedSkills(t *testing.T) {
	env, _ := testEnv(t)
	env.Skills = nil
	r := agent.NewToolRegistry()
	if err := r.AddBuiltins(env, []string{"read_skill", "run_skill"}); err != nil {
		t.Fatal(err)
	}
	if len(r.Names()) != 0 {
		t.Fatalf("skill tools without skills: %v", r.Names())
	}
}
