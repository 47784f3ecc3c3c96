package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner/store"
)

// TestGrantsPage: everyone sees the standing grants; only the grant and
// admin roles get the Revoke button, the service refuses an approver's
// post as the API does, and a revoked grant leaves the page.
func TestGrantsPage(t *testing.T) {
	e := newEnvWith(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "done"}), nil, nil)
	g, err := e.st.AddStandingGrant(context.Background(), store.NewStandingGrant{Scope: "Bash(go test:*)", For: store.GrantForSchedule,
		Name: "nightly", GrantedBy: "token:root"})
	if err != nil {
		t.Fatal(err)
	}
	bob := e.browser()
	bob.signIn(e.token("bob", store.RoleApprove))
	p := bob.get("/grants")
	if p.StatusCode != 200 || !strings.Contains(p.Body, "Bash(go test:*)") || !strings.Contains(p.Body, "schedule nightly") || strings.Contains(p.Body, "Revoke</button>") {
		t.Fatalf("bob's grants page = %d:\n%s", p.StatusCode, p.Body)
	}
	if p := bob.post("/grants/"+g.ID+"/revoke", url.Values{"csrf": {bob.csrf()}}); p.StatusCode != http.StatusForbidden {
		t.Errorf("an approver revoking = %d", p.StatusCode)
	}
	gina := e.browser()
	gina.signIn(e.token("gina", store.RoleGrant))
	if p := gina.get("/grants"); !strings.Contains(p.Body, "Revoke</button>") {
		t.Fatalf("gina's page has no Revoke:\n%s", p.Body)
	}
	if p := gina.post("/grants/"+g.ID+"/revoke", url.Values{"csrf": {gina.csrf()}}); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke = %d:\n%s", p.StatusCode, p.Body)
	}
	if p := gina.get("/grants"); strings.Contains(p.Body, "Bash(go test:*)") {
		t.Errorf("a revoked grant is still listed:\n%s", p.Body)
	}
	if got, _ := e.st.StandingGrant(context.Background(), g.ID); got.RevokedBy != "token:gina" {
		t.Errorf("revoked by %q", got.RevokedBy)
	}
}
