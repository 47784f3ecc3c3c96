package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestSchedulesPage: everyone sees the schedules; only an admin gets the
// buttons, and the service refuses the others' posts as the API does.
func TestSchedulesPage(t *testing.T) {
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Schedules = []config.Schedule{{Name: "nightly", Cron: "0 3 * * *", Timezone: "Europe/Berlin", Prompt: "update deps",
		Overlap: config.OverlapSkip, CatchUp: config.CatchUpLatest, MaxFailures: 3}}
	e := newEnvWith(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "done"}), set, nil)

	bob := e.browser()
	bob.signIn(e.token("bob", store.RoleApprove))
	p := bob.get("/schedules")
	if p.StatusCode != 200 || !strings.Contains(p.Body, "nightly") || !strings.Contains(p.Body, "Europe/Berlin") || strings.Contains(p.Body, "Pause</button>") {
		t.Fatalf("bob's schedules page = %d:\n%s", p.StatusCode, p.Body)
	}
	// 03:00 in Berlin is 03:00 CET or CEST on the page, not the server's
	// or the viewer's clock.
	if !regexp.MustCompile(`data-zone>\d{4}-\d\d-\d\d 03:00 CES?T</time>`).MatchString(p.Body) {
		t.Errorf("the next run is not shown in the schedule's zone:\n%s", p.Body)
	}
	if p := bob.post("/schedules/nightly/pause", url.Values{"csrf": {bob.csrf()}}); p.StatusCode != http.StatusForbidden {
		t.Errorf("an approver pausing = %d", p.StatusCode)
	}

	admin := e.browser()
	admin.signIn(e.token("root", store.RoleAdmin))
	if p := admin.get("/schedules"); !strings.Contains(p.Body, "Pause</button>") || !strings.Contains(p.Body, "Run now</button>") {
		t.Fatalf("the admin's page has no actions:\n%s", p.Body)
	}
	if p := admin.post("/schedules/nightly/pause", url.Values{"csrf": {admin.csrf()}}); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("admin pause = %d:\n%s", p.StatusCode, p.Body)
	}
	if p := admin.get("/schedules"); !strings.Contains(p.Body, "s-paused") || !strings.Contains(p.Body, "Resume</button>") {
		t.Errorf("after pause:\n%s", p.Body)
	}
	p = admin.post("/schedules/nightly/run", url.Values{"csrf": {admin.csrf()}})
	if p.StatusCode != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/tasks/t_") {
		t.Fatalf("run now = %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	if p := admin.post("/schedules/nope/run", url.Values{"csrf": {admin.csrf()}}); p.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown schedule = %d", p.StatusCode)
	}
}

// TestNodesAndWebhooksPages: the node serving the page is listed; each
// webhook shows its deliveries with their outcome and reason, escaped.
func TestNodesAndWebhooksPages(t *testing.T) {
	e := newEnvWith(t, nil, nil, []config.Webhook{{Name: "ci", Kind: "github"}, {Name: "quiet", Kind: "generic"},
		{Name: "deps", Kind: "hmac", Goal: true, BudgetUSD: 1.25, Posture: "auto"}})
	for _, d := range []store.Delivery{
		{Webhook: "ci", DeliveryID: "d-1", Event: "check_run.completed", Outcome: store.DeliveryAccepted, Status: 202},
		{Webhook: "ci", DeliveryID: "d-2", Outcome: store.DeliveryRejected, Status: 401, Reason: `bad signature <img src=x>`},
	} {
		if _, err := e.st.RecordDelivery(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.signIn(e.token("erin", store.RoleSubmit))
	if p := b.get("/nodes"); p.StatusCode != 200 || !strings.Contains(p.Body, e.svc.Node()) || !strings.Contains(p.Body, "(this one)") {
		t.Errorf("nodes page = %d:\n%s", p.StatusCode, p.Body)
	}
	p := b.get("/webhooks")
	for _, want := range []string{"d-accepted", "check_run.completed", "d-rejected", "bad signature &lt;img src=x&gt;", "No deliveries yet.",
		"goal (budget $1.25) · posture auto"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("webhooks page lacks %q", want)
		}
	}
	if strings.Contains(p.Body, "<img src=x>") {
		t.Error("a delivery's reason is not escaped")
	}
}

// TestNodesPageCountsWaitingApart: a task waiting for approval holds no
// worker, so the node's running list has only the task that runs, and the
// page counts the waiting one on its own; a node started without a version
// shows one ("dev" in a test binary), not a blank.
func TestNodesPageCountsWaitingApart(t *testing.T) {
	p := &holdAfterFirst{Provider: bashThenDone(), hold: make(chan struct{})}
	e := newEnv(t, p)
	t.Cleanup(func() { close(p.hold) })
	waiting, _ := e.parked("token:alice", "needs a decision")
	task, _, err := e.svc.Submit(t.Context(), runner.TaskRequest{Source: store.SourceAPI, Requester: "token:alice", Prompt: "runs a while"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, e.svc, task.ID, 0, store.StateRunning)

	nodes, err := e.svc.Nodes(t.Context())
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes = %+v, %v", nodes, err)
	}
	if n := nodes[0]; !slices.Equal(n.Running, []string{task.ID}) || n.Version != "dev" {
		t.Fatalf("node = running %v, version %q; want only %s running (not the waiting %s) and version dev", n.Running, n.Version, task.ID, waiting)
	}

	b := e.browser()
	b.signIn(e.token("erin", store.RoleSubmit))
	pg := b.get("/nodes")
	for _, want := range []string{`data-work="running">1 running</a>`, `data-work="waiting_approval">1 waiting for approval</a>`,
		`data-work="queued">0 queued</a>`, `data-label="Version">dev</td>`, `data-running>1/2 <a href="/tasks/` + task.ID + `">`} {
		if !strings.Contains(pg.Body, want) {
			t.Errorf("nodes page lacks %q:\n%s", want, pg.Body)
		}
	}
	if strings.Contains(pg.Body, `href="/tasks/`+waiting+`"`) {
		t.Error("the waiting task is listed as running on the node")
	}
}

// holdAfterFirst answers the first model call and holds every later one
// until hold closes (or the run ends), so a second task stays running.
type holdAfterFirst struct {
	agent.Provider
	hold  chan struct{}
	calls atomic.Int32
}

func (p *holdAfterFirst) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	if p.calls.Add(1) > 1 {
		select {
		case <-p.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return p.Provider.Stream(ctx, req)
}

// TestApprovalsPageShowsTheLatestDecisions: decisions show latest first,
// whatever order the calls were asked in. The page used to list each state
// oldest first, capped at 1,000, so past that the newest decisions never
// appeared; the store now answers newest first (its TestRecentDecisions
// covers the cap; 1,000 approvals here would take half a minute).
func TestApprovalsPageShowsTheLatestDecisions(t *testing.T) {
	e := newEnv(t, bashThenDone())
	taskID, _ := e.parked("token:alice", "many asks")
	ctx := t.Context()
	var ids []string
	for i := range 3 {
		a, err := e.st.CreateApproval(ctx, store.NewApproval{TaskID: taskID, Tool: "bash", CallHash: fmt.Sprint("h-", i),
			Subject: fmt.Sprintf("call-%d-of-3", i), Requester: "token:alice", ExpiresAt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	for _, i := range []int{2, 0, 1} {
		e.clk.Advance(time.Second) // decided_at is the store's clock
		if _, err := e.st.Decide(ctx, ids[i], store.DecideOpts{Decision: store.Deny, Approver: "token:carol"}); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.signIn(e.token("erin", store.RoleApprove))
	p := b.get("/approvals")
	decided := p.Body[strings.Index(p.Body, "<h2>Decided</h2>"):]
	at := func(i int) int { return strings.Index(decided, fmt.Sprintf("call-%d-of-3", i)) }
	if !(at(1) >= 0 && at(1) < at(0) && at(0) < at(2)) {
		t.Fatalf("decisions shown at %d, %d, %d; want call 1 (decided last), then 0, then 2", at(1), at(0), at(2))
	}
}

// A task page lists every pending approval of the task, even one that came
// after more decided ones than the page shows.
func TestTaskPageShowsAPendingApprovalAfterManyDecided(t *testing.T) {
	e := newEnv(t, bashThenDone())
	taskID, _ := e.parked("token:alice", "many asks")
	ctx := t.Context()
	for i := range 200 { // the decided approvals a task page shows
		a, err := e.st.CreateApproval(ctx, store.NewApproval{TaskID: taskID, Tool: "bash", CallHash: fmt.Sprint("h-", i),
			Subject: fmt.Sprintf("old-call-%d", i), Requester: "token:alice", ExpiresAt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.Decide(ctx, a.ID, store.DecideOpts{Decision: store.Deny, Approver: "token:carol"}); err != nil {
			t.Fatal(err)
		}
	}
	e.clk.Advance(time.Second)
	if _, err := e.st.CreateApproval(ctx, store.NewApproval{TaskID: taskID, Tool: "bash", CallHash: "h-new",
		Subject: "the-newest-ask", Requester: "token:alice", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(e.token("erin", store.RoleApprove))
	p := b.get("/tasks/" + taskID)
	if !strings.Contains(p.Body, "the-newest-ask") {
		t.Fatal("the task page does not show the newest pending approval")
	}
	if !strings.Contains(p.Body, "old-call-0") {
		t.Error("the task page dropped the decided approvals")
	}
}
