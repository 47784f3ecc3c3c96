package dashboard_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"reasonix/goals"
	"reasonix/runner"
	"reasonix/runner/store"
)

// TestFleetGraph: a goal task's fleet is drawn as SVG from its latest
// snapshot: one box per node classed by state, one edge per depends_on,
// the skip reason on hover, hostile ids escaped.
func TestFleetGraph(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	task, _, err := e.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "fan out"})
	if err != nil {
		t.Fatal(err)
	}
	snap := func(nodes ...goals.NodeStatus) {
		raw, _ := json.Marshal(goals.FleetSnapshot{FleetID: "f1", Nodes: nodes})
		if _, err := e.st.AppendEvent(ctx, task.ID, string(goals.EventFleetUpdated), raw); err != nil {
			t.Fatal(err)
		}
	}
	snap(goals.NodeStatus{ID: "scan", State: goals.NodeRunning})
	snap(goals.NodeStatus{ID: "scan", State: goals.NodeFailed, Reason: "provider"},
		goals.NodeStatus{ID: "fix", State: goals.NodeSkipped, DependsOn: []string{"scan"}, Reason: "upstream scan failed"},
		goals.NodeStatus{ID: "docs", State: goals.NodeDone},
		goals.NodeStatus{ID: `<b>x</b>`, State: goals.NodeSkipped, DependsOn: []string{"fix", "docs"}})

	b := e.browser()
	b.signIn(e.token("erin", store.RoleSubmit))
	body := b.get("/tasks/" + task.ID).Body
	if n := strings.Count(body, "<svg"); n != 1 {
		t.Fatalf("%d svg graphs, want one (the latest snapshot of f1):\n%s", n, body)
	}
	for _, want := range []string{`class="fn f-failed"`, `class="fn f-skipped"`, `class="fn f-done"`,
		"fix: skipped (upstream scan failed)", "depends on scan", "&lt;b&gt;x&lt;/b&gt;", "1 done · 1 failed · 2 skipped"} {
		if !strings.Contains(body, want) {
			t.Errorf("the graph lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>x</b>") {
		t.Error("a node id is not escaped")
	}
	if n := len(regexp.MustCompile(`class="edge"`).FindAllString(body, -1)); n != 3 {
		t.Errorf("%d edges, want 3 (fix←scan, x←fix, x←docs)", n)
	}
	// Layers: scan and docs in the first column, fix in the second, x in the third.
	for id, x := range map[string]string{"scan": "8", "docs": "8", "fix": "224", "&lt;b&gt;x&lt;/b&gt;": "440"} {
		if !regexp.MustCompile(`<rect x="` + x + `" [^>]*/><text [^>]*>` + regexp.QuoteMeta(id) + `</text>`).MatchString(body) {
			t.Errorf("node %s is not in the column at x=%s", id, x)
		}
	}
}
