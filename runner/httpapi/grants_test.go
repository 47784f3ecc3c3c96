package httpapi_test

import (
	"context"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/store"
)

// TestGrantRoutes: allow_always through POST /api/v1/approvals/{id} by a
// grant token makes a standing grant that GET /api/v1/grants lists; an
// approve token may neither choose it nor revoke; DELETE revokes, and
// the list without all=true no longer shows it.
func TestGrantRoutes(t *testing.T) {
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"touch f"}`}}},
		agenttest.Turn{Text: "done"})
	e := newEnv(t, p)
	bob := e.as(e.newToken("bob", store.RoleApprove, ""))
	gina := e.as(e.newToken("gina", store.RoleGrant, ""))
	task, _, err := e.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceCron, Requester: "schedule:nightly",
		Prompt: "nightly", Posture: "ask", Notify: []store.NotifyTarget{{Transport: "slack", Channel: "C1"}}})
	if err != nil {
		t.Fatal(err)
	}
	e.waitTask(task.ID, "waiting_approval")
	var list struct{ Approvals []map[string]any }
	e.do("GET", "/api/v1/approvals?state=pending", "", nil, &list)
	if len(list.Approvals) != 1 || list.Approvals[0]["always_scope"] != "Bash(touch:*)" {
		t.Fatalf("pending = %+v", list)
	}
	id := list.Approvals[0]["id"].(string)
	for _, tc := range []struct {
		who    *env
		body   string
		status int
		code   string
	}{
		{bob, `{"decision":"allow_always"}`, 403, "forbidden"},
		{gina, `{"decision":"allow_always","grant_for":"webhook"}`, 400, "invalid"},
		{gina, `{"decision":"allow_always","scope":"Bash(curl:*)"}`, 400, "invalid"},
	} {
		if st, code := tc.who.status("POST", "/api/v1/approvals/"+id, tc.body); st != tc.status || code != tc.code {
			t.Errorf("decide %s = %d %q, want %d %q", tc.body, st, code, tc.status, tc.code)
		}
	}
	var ap map[string]any
	if res := gina.do("POST", "/api/v1/approvals/"+id, `{"decision":"allow_always","grant_for":"schedule"}`, nil, &ap); res.StatusCode != 200 ||
		ap["decision"] != "allow_always" || ap["scope"] != "Bash(touch:*)" {
		t.Fatalf("allow_always = %d %v", res.StatusCode, ap)
	}
	var grants struct{ Grants []map[string]any }
	e.do("GET", "/api/v1/grants", "", nil, &grants)
	if len(grants.Grants) != 1 || grants.Grants[0]["scope"] != "Bash(touch:*)" || grants.Grants[0]["grant_for"] != "schedule" ||
		grants.Grants[0]["name"] != "nightly" || grants.Grants[0]["granted_by"] != "token:gina" {
		t.Fatalf("grants = %+v", grants)
	}
	gid := grants.Grants[0]["id"].(string)
	if st, code := bob.status("DELETE", "/api/v1/grants/"+gid, ""); st != 403 || code != "forbidden" {
		t.Errorf("revoke by an approver = %d %q", st, code)
	}
	if st, code := gina.status("DELETE", "/api/v1/grants/sg_nope", ""); st != 404 || code != "not_found" {
		t.Errorf("revoke of an unknown grant = %d %q", st, code)
	}
	var g map[string]any
	if res := gina.do("DELETE", "/api/v1/grants/"+gid, "", nil, &g); res.StatusCode != 200 || g["revoked_by"] != "token:gina" || g["revoked_at"] == nil {
		t.Fatalf("revoke = %d %v", res.StatusCode, g)
	}
	grants.Grants = nil
	e.do("GET", "/api/v1/grants", "", nil, &grants)
	if len(grants.Grants) != 0 {
		t.Errorf("live grants after the revocation = %+v", grants.Grants)
	}
	e.do("GET", "/api/v1/grants?all=true", "", nil, &grants)
	if len(grants.Grants) != 1 {
		t.Errorf("all grants = %+v", grants.Grants)
	}
	e.waitTask(task.ID, "succeeded")
}
