package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/config"
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
	e := newEnvWith(t, nil, nil, []config.Webhook{{Name: "ci", Kind: "github"}, {Name: "quiet", Kind: "generic"}})
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
	for _, want := range []string{"d-accepted", "check_run.completed", "d-rejected", "bad signature &lt;img src=x&gt;", "No deliveries yet."} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("webhooks page lacks %q", want)
		}
	}
	if strings.Contains(p.Body, "<img src=x>") {
		t.Error("a delivery's reason is not escaped")
	}
}
