package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/goals"
	"reasonix/internal/testenv"
	"reasonix/runner/store"
)

// TestBrowser drives the dashboard in Debian's Chromium with playwright-core
// (e2e/browser.mjs): a link preview fetching the requester's one-time link
// leaves it unspent; she opens it, presses Sign in, and cannot
// approve her own call, sees the fleet graph — no edge crossing a node's
// box as drawn, at 390 and 1280 px, the graph scrolling inside its frame on
// the phone — answers a blocked task's question from its page and watches
// it finish, signs out and is sent to sign in,
// and her old session cookie and CSRF token replayed are refused (401); a page
// on another loopback origin posting the approver's valid token with his
// cookies is refused (403) and changes nothing; an approver signs
// in with his token, sees the task, clicks Allow once and watches it finish
// without a reload, its Cancel button giving way to Resume, while the task
// list open in another tab follows it to succeeded on its own; the command's
// output and the answer, both full of markup, show as text and run nothing; the schedules,
// webhook deliveries and nodes pages show what the store holds; a task waiting for CI shows its
// pull request's checks and follows a check's change live; the memory page lists the memories and
// forgets one; neither page scrolls sideways on a phone or a desktop; no page logs an error, breaks the CSP or requests
// anything from elsewhere. Screenshots go to the test's artifact directory
// (go test -artifacts keeps them).
//
// It needs chromium, node and `npm ci` run in e2e/; scripts/test-deps.sh
// provides them, and REASONIX_TEST_REQUIRE=chromium (or all) makes their
// absence a failure instead of a skip.
func TestBrowser(t *testing.T) {
	node, chromium := browserDeps(t)

	// The model's answer after the approval takes a moment, so the page the
	// decision returns to sees the task still running and must follow it
	// live to its end.
	// A schedule and a webhook with two deliveries, so that their pages have
	// something to show; the cron fires once a year, never during the test.
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Schedules = []config.Schedule{{Name: "nightly", Cron: "0 3 1 1 *", Timezone: "Europe/Berlin", Prompt: "update deps",
		Overlap: config.OverlapSkip, CatchUp: config.CatchUpLatest, MaxFailures: 3}}
	// The blocked task's model answers its first turn and, after the
	// requester's answer from the page, its second.
	asked := &byPrompt{word: "pick the release branch", to: agenttest.NewScriptedProvider(agenttest.Turn{Text: "ok"}, agenttest.Turn{Text: "releasing from the branch you named"}),
		Provider: &slowAfterFirst{Provider: hostileOutput(), delay: 3 * time.Second}}
	e := newEnvWith(t, &byPrompt{word: "ship the fix", to: agenttest.NewScriptedProvider(agenttest.Turn{Text: "shipped"}),
		Provider: asked}, set,
		[]config.Webhook{{Name: "ci", Kind: "github"}})
	for _, d := range []store.Delivery{
		{Webhook: "ci", DeliveryID: "d-1", Event: "check_run.completed", Outcome: store.DeliveryAccepted, Status: 202},
		{Webhook: "ci", DeliveryID: "d-2", Outcome: store.DeliveryRejected, Status: 401, Reason: "bad signature <img src=x>"},
	} {
		if _, err := e.st.RecordDelivery(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	// Bob is an admin so that his page also offers the task's actions, which
	// must switch from Cancel to Resume live; deciding as an approve role is
	// TestApprovalAuthorization's.
	bob := e.token("bob", store.RoleAdmin)
	e.token("alice", store.RoleApprove)
	taskID, _ := e.parked("token:alice", `tidy the <script>alert("x")</script> tag`)
	// The task's fleet, as a goal's fleet tool reports it: four layers
	// with edges that skip a layer (scan → release, lint → release), which
	// a careless layout draws through the boxes between.
	fleet, _ := json.Marshal(goals.FleetSnapshot{FleetID: "f1", Nodes: []goals.NodeStatus{
		{ID: "scan", State: goals.NodeDone}, {ID: "fix", State: goals.NodeRunning, DependsOn: []string{"scan"}},
		{ID: "lint", State: goals.NodeDone, DependsOn: []string{"scan"}},
		{ID: "docs", State: goals.NodeSkipped, DependsOn: []string{"fix"}, Reason: "upstream fix failed"},
		{ID: "release", State: goals.NodePending, DependsOn: []string{"scan", "lint", "docs"}}}})
	if _, err := e.st.AppendEvent(t.Context(), taskID, string(goals.EventFleetUpdated), fleet); err != nil {
		t.Fatal(err)
	}
	// A task waiting for its pull request's CI, one check still pending:
	// the page shows the checks and follows them live when the browser
	// script asks (ctl's /ci) for the pending one to fail.
	prTask := e.finished("ship the fix")
	longName := "integration-tests-on-every-supported-platform-" + strings.Repeat("x", 60)
	e.waitCI(prTask.ID, store.StateSucceeded, prWithCI(store.CIWaiting,
		store.CICheck{Name: "build", State: "success", URL: "https://ci.test/build/1"},
		store.CICheck{Name: longName, State: "pending", URL: "https://ci.test/it/2"}))
	ctl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.waitCI(prTask.ID, store.StateWaitingCI, prWithCI(store.CIFixing,
			store.CICheck{Name: "build", State: "success", URL: "https://ci.test/build/1"},
			store.CICheck{Name: longName, State: "failure", URL: "https://ci.test/it/2"}))
	}))
	defer ctl.Close()
	// Memories: a workspace's with a long unbroken word (a phone must not
	// scroll sideways for it), and one of a person's.
	for _, m := range []store.NewMemory{
		{Scope: store.MemoryScope{Kind: store.MemoryWorkspace, Name: "repo"}, By: "token:alice", TaskID: taskID,
			Text: "CI logs live at https://ci.example.com/" + strings.Repeat("very-long-path-segment/", 8) + " — read them before retrying"},
		{Scope: store.MemoryScope{Kind: store.MemoryUser, Name: "token:bob"}, By: "token:bob", Text: "bob reviews <b>docs</b> changes"},
	} {
		if _, _, err := e.st.AddMemory(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	// A task of alice's blocked on a goal's question, which she answers
	// from its page.
	asking := e.finished("pick the release branch")
	q, _ := json.Marshal(map[string]string{"goal_id": "g1", "question": "Which branch should the release come from?"})
	if _, err := e.st.AppendEvent(t.Context(), asking.ID, "question", q); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.SetTaskState(t.Context(), asking.ID, []store.State{store.StateSucceeded}, store.StateBlocked,
		&store.StateOpts{Result: &store.Result{Reason: "the goal asks the requester a question"}}); err != nil {
		t.Fatal(err)
	}
	code, err := e.st.CreateLoginCode(t.Context(), "alice", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	shots := t.ArtifactDir()
	ctx, cancel := context.WithTimeout(t.Context(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "browser.mjs")
	cmd.Dir = "e2e"
	cmd.Env = append(os.Environ(), "DASH_URL="+e.srv.URL, "DASH_SHOTS="+shots, "DASH_TASK="+taskID,
		"DASH_APPROVER_TOKEN="+bob, "DASH_CHROMIUM="+chromium, "DASH_NODE="+e.svc.Node(),
		"DASH_PR_TASK="+prTask.ID, "DASH_CTL="+ctl.URL, "DASH_QUESTION_TASK="+asking.ID,
		"DASH_REQUESTER_LINK="+e.srv.URL+"/login/link?code="+url.QueryEscape(code))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("browser run took %s; screenshots in %s\n%s", time.Since(start).Round(time.Millisecond), shots, out)
	var exit *exec.ExitError
	if errors.As(err, &exit) || err != nil {
		t.Fatalf("the browser script failed: %v", err)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatal("the browser script did not finish")
	}
	for _, f := range []string{"login-link.png", "fleet.png", "fleet-desktop.png", "question.png", "question-answered-desktop.png", "task-requester.png", "approvals.png", "tasks.png", "task-done.png", "task-desktop.png", "task-dark.png",
		"schedules.png", "webhooks.png", "nodes.png", "pr-checks.png", "pr-checks-desktop.png", "memories.png", "memories-desktop.png"} {
		if st, err := os.Stat(filepath.Join(shots, f)); err != nil || st.Size() == 0 {
			t.Errorf("screenshot %s: %v", f, err)
		}
	}
}

// hostileOutput is bashThenDone whose command prints markup and whose
// answer carries markup too: the page must show both as text and run
// nothing (each payload sets window.__pwned if it runs).
func hostileOutput() *agenttest.ScriptedProvider {
	return agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash",
			Arguments: `{"command":"echo '<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>'; echo hi > f"}`}}},
		agenttest.Turn{Text: `done <script>window.__pwned=3</script><img src=x onerror="window.__pwned=4">`})
}

// browserDeps finds node and Chromium and checks playwright-core is
// installed, skipping (or failing, when required) without them.
func browserDeps(t testing.TB) (node, chromium string) {
	t.Helper()
	chromium = os.Getenv("REASONIX_TEST_CHROMIUM")
	if chromium == "" {
		chromium = testenv.LookPath(t, testenv.Chromium)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, testenv.Chromium, "node is not installed (apt-get install nodejs npm)")
	}
	if _, err := os.Stat(filepath.Join("e2e", "node_modules", "playwright-core")); err != nil {
		testenv.Missing(t, testenv.Chromium, "playwright-core is not installed: run `npm ci` in runner/dashboard/e2e")
	}
	return node, chromium
}

// byPrompt sends a task whose first message holds word to its own
// provider, every other to the embedded one.
type byPrompt struct {
	agent.Provider
	word string
	to   agent.Provider
}

func (p *byPrompt) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			if strings.Contains(m.Content, p.word) {
				return p.to.Stream(ctx, req)
			}
			break
		}
	}
	return p.Provider.Stream(ctx, req)
}

// slowAfterFirst delays every model call but the first.
type slowAfterFirst struct {
	agent.Provider
	delay time.Duration
	calls atomic.Int32
}

func (p *slowAfterFirst) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	if p.calls.Add(1) > 1 {
		select {
		case <-time.After(p.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return p.Provider.Stream(ctx, req)
}
