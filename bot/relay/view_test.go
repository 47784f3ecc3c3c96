package relay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"reasonix/runner/store"
)

type plainFormat struct{}

func (plainFormat) Escape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}
func (plainFormat) Bold(s string) string { return "*" + s + "*" }
func (plainFormat) Code(s string) string { return "`" + s + "`" }
func (plainFormat) Limit() int           { return 3000 }

func ev(typ string, payload any, at time.Time) store.Event {
	b, _ := json.Marshal(payload)
	return store.Event{Type: typ, Payload: b, Time: at}
}

func TestStatusShowsPlanFleetAndCounters(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := view{taskID: "t_1", prompt: "ship <it>\nsecond line"}
	for _, e := range []store.Event{
		ev("task_state", map[string]any{"state": "running"}, t0),
		ev("plan_updated", map[string]any{"plan": []map[string]string{
			{"content": "read the code", "status": "completed"},
			{"content": "fix <the> bug", "status": "in_progress"},
			{"content": "run tests", "status": "pending"}}}, t0),
		ev("fleet_updated", map[string]any{"fleet_id": "f1", "nodes": []map[string]any{
			{"id": "scan", "state": "done"},
			{"id": "fix", "state": "failed", "depends_on": []string{"scan"}, "reason": "provider.rejected"},
			{"id": "verify", "state": "skipped", "depends_on": []string{"fix"}, "reason": "upstream failed"},
			{"id": "docs", "state": "running"}}}, t0),
		ev("tool_started", map[string]any{"tool": "bash", "args": `{"command":"go test ./..."}`}, t0),
		ev("usage", map[string]any{"prompt": 1000, "completion": 234}, t0),
		ev("noise", nil, t0),
	} {
		v.apply(e)
	}
	got := v.render(plainFormat{}, t0.Add(75*time.Second))
	for _, want := range []string{
		"▶ *Task t_1* — running", "ship &lt;it&gt;", "✔ read the code", "▶ fix &lt;the&gt; bug", "○ run tests",
		"✔ scan (done)", "  ✖ fix (failed: provider.rejected)", "    ⤼ verify (skipped: upstream failed)", "▶ docs (running)",
		"Now: bash go test ./...", "elapsed 1m15s · 1234 tokens",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "second line") {
		t.Errorf("status shows more than the prompt's first line:\n%s", got)
	}
	v.apply(ev("task_state", map[string]any{"state": "succeeded"}, t0.Add(90*time.Second)))
	got = v.render(plainFormat{}, t0.Add(time.Hour))
	if !strings.Contains(got, "✅ *Task t_1* — done") || !strings.Contains(got, "elapsed 1m30s") || strings.Contains(got, "Now:") {
		t.Errorf("finished status:\n%s", got)
	}
}

func TestFleetTreeSurvivesCycles(t *testing.T) {
	lines := fleetTree([]node{{ID: "a", State: "pending", DependsOn: []string{"b"}}, {ID: "b", State: "pending", DependsOn: []string{"a"}}}, nil)
	if len(lines) != 2 {
		t.Errorf("cycle rendered as %q", lines)
	}
}

func TestSubagentReportsFoldIntoTheFleetTree(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := view{taskID: "t_1", prompt: "split it"}
	v.apply(ev("fleet_updated", map[string]any{"nodes": []map[string]any{
		{"id": "api", "state": "running"}, {"id": "docs", "state": "pending", "depends_on": []string{"api"}}}}, t0))
	if !v.apply(ev("subagent_finished", map[string]any{"id": "api", "state": "done"}, t0)) {
		t.Fatal("a fleet node's end did not change the status")
	}
	v.apply(ev("fleet_updated", map[string]any{"nodes": []map[string]any{
		{"id": "api", "state": "done", "summary": "added GET /items\nand its tests"}, {"id": "docs", "state": "running", "depends_on": []string{"api"}}}}, t0))
	got := v.render(plainFormat{}, t0)
	for _, want := range []string{"✔ api (done) — added GET /items", "  ▶ docs (running)"} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "and its tests") {
		t.Errorf("the tree shows more than a summary's first line:\n%s", got)
	}
	// A sub-agent that is no node of the fleet changes nothing here: it
	// gets a message of its own.
	if v.apply(ev("subagent_finished", map[string]any{"id": "solo", "state": "done"}, t0)) {
		t.Error("a sub-agent outside the fleet changed the status")
	}
}

// A fleet a sub-agent started is drawn under that sub-agent's node, and
// its nodes' ends update it there, even when an id repeats a top-level one.
func TestNestedFleetDrawsUnderItsParentNode(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v := view{taskID: "t_1", prompt: "split it"}
	v.apply(ev("fleet_updated", map[string]any{"fleet_id": "fleet-1", "nodes": []map[string]any{
		{"id": "api", "ref": "sa-1", "state": "running"}, {"id": "docs", "ref": "", "state": "pending", "depends_on": []string{"api"}}}}, t0))
	if !v.apply(ev("fleet_updated", map[string]any{"fleet_id": "fleet-2", "parent": "sa-1", "parent_id": "api", "depth": 2, "nodes": []map[string]any{
		{"id": "docs", "ref": "sa-2", "state": "running"}, {"id": "tests", "ref": "sa-3", "state": "pending", "depends_on": []string{"docs"}}}}, t0)) {
		t.Fatal("a nested fleet did not change the status")
	}
	if !v.apply(ev("subagent_finished", map[string]any{"id": "docs", "ref": "sa-2", "parent": "sa-1", "state": "failed", "reason": "provider.rejected"}, t0)) {
		t.Fatal("a nested node's end did not change the status")
	}
	got := v.render(plainFormat{}, t0)
	want := "▶ api (running)\n  ↳ ✖ docs (failed: provider.rejected)\n    ↳ ○ tests (pending)\n  ○ docs (pending)"
	if !strings.Contains(got, want) {
		t.Errorf("status lacks\n%s\nin:\n%s", want, got)
	}
	if v.fleet[0].ID != "api" || len(v.fleet) != 2 {
		t.Errorf("the nested fleet replaced the top-level one: %+v", v.fleet)
	}
}
