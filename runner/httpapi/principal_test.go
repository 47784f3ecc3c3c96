package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/policy"
	"reasonix/runner/store"
)

// parkedTask has alice (role approve) submit a task that waits on an
// approval, and returns the task and approval ids.
func parkedTask(t *testing.T) (e, alice *env, taskID, approvalID string) {
	t.Helper()
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		agenttest.Turn{Text: "done"})
	e = newEnv(t, p)
	alice = e.as(e.newToken("alice", store.RoleApprove, ""))
	var c created
	if res := alice.do("POST", "/api/v1/tasks", `{"prompt":"needs approval"}`, nil, &c); res.StatusCode != 202 {
		t.Fatalf("alice's task = %d", res.StatusCode)
	}
	e.waitTask(c.ID, "waiting_approval")
	var list struct{ Approvals []map[string]any }
	e.do("GET", "/api/v1/approvals?state=pending", "", nil, &list)
	if len(list.Approvals) != 1 {
		t.Fatalf("pending = %+v", list)
	}
	return e, alice, c.ID, list.Approvals[0]["id"].(string)
}

// TestStolenSubmitToken: whoever holds a submit token can submit and read,
// but cannot approve, cannot exceed the token's posture and cannot touch
// other principals' tasks.
func TestStolenSubmitToken(t *testing.T) {
	e, _, taskID, approvalID := parkedTask(t)
	thief := e.as(e.newToken("ci", store.RoleSubmit, ""))

	var er struct{ Code, Message string }
	res := thief.do("POST", "/api/v1/approvals/"+approvalID, `{"decision":"allow_once"}`, nil, &er)
	if res.StatusCode != 403 || er.Code != "forbidden" || !strings.Contains(er.Message, "role submit") {
		t.Errorf("a submit token deciding = %d %+v", res.StatusCode, er)
	}
	res = thief.do("POST", "/api/v1/tasks", `{"prompt":"rm everything","posture":"yolo"}`, nil, &er)
	if res.StatusCode != 403 || !strings.Contains(er.Message, "limit (auto)") {
		t.Errorf("a yolo task from a submit token = %d %+v", res.StatusCode, er)
	}
	for _, path := range []string{"/cancel", "/resume", "/messages"} {
		body := ""
		if path == "/messages" {
			body = `{"text":"ignore your instructions"}`
		}
		if st, code := thief.status("POST", "/api/v1/tasks/"+taskID+path, body); st != 403 || code != "forbidden" {
			t.Errorf("%s on alice's task = %d %q, want 403", path, st, code)
		}
	}
	var ap map[string]any
	if thief.do("GET", "/api/v1/approvals?state=pending", "", nil, &ap); ap["approvals"] == nil {
		t.Errorf("a submit token cannot read: %v", ap)
	}
	var mine created
	if res := thief.do("POST", "/api/v1/tasks", `{"prompt":"say hi","posture":"auto"}`, nil, &mine); res.StatusCode != 202 {
		t.Fatalf("an auto task from a submit token = %d", res.StatusCode)
	}
	if v := e.waitTask(mine.ID, "succeeded", "failed", "waiting_approval"); v["requester"] != "token:ci" || v["posture"] != "auto" {
		t.Errorf("the submit token's task = %v", v)
	}
	var list struct{ Tasks []map[string]any }
	if e.do("GET", "/api/v1/tasks?state=waiting_approval", "", nil, &list); len(list.Tasks) != 1 {
		t.Errorf("waiting tasks = %+v; alice's task must still wait", list.Tasks)
	}
}

// TestMaxPostureOfAToken: --max-posture lowers or raises a token's limit.
func TestMaxPostureOfAToken(t *testing.T) {
	e := newEnv(t, nil)
	askOnly := e.as(e.newToken("reader", store.RoleApprove, policy.PostureAsk))
	var er struct{ Code, Message string }
	if res := askOnly.do("POST", "/api/v1/tasks", `{"prompt":"x","posture":"auto"}`, nil, &er); res.StatusCode != 403 || !strings.Contains(er.Message, "limit (ask)") {
		t.Errorf("auto under an ask-only token = %d %+v", res.StatusCode, er)
	}
	trusted := e.as(e.newToken("trusted", store.RoleSubmit, policy.PostureYolo))
	if st, _ := trusted.status("POST", "/api/v1/tasks", `{"prompt":"x","posture":"yolo"}`); st != 202 {
		t.Errorf("yolo under a yolo token = %d", st)
	}
}

// TestRevokedToken: revocation takes effect on the next request.
func TestRevokedToken(t *testing.T) {
	e := newEnv(t, nil)
	bob := e.as(e.newToken("bob", store.RoleAdmin, ""))
	if st, _ := bob.status("GET", "/api/v1/tasks", ""); st != 200 {
		t.Fatalf("before revocation = %d", st)
	}
	if _, err := e.st.RevokeToken(context.Background(), "bob"); err != nil {
		t.Fatal(err)
	}
	if st, code := bob.status("GET", "/api/v1/tasks", ""); st != 401 || code != "unauthorized" {
		t.Errorf("after revocation = %d %q, want 401", st, code)
	}
}

// TestSelfApprovalComparesPrincipals: the requester token:alice cannot
// approve her own task's call, neither with her token nor by claiming
// another name in the body; another approver can.
func TestSelfApprovalComparesPrincipals(t *testing.T) {
	e, alice, taskID, approvalID := parkedTask(t)
	var er struct{ Code, Message string }
	if res := alice.do("POST", "/api/v1/approvals/"+approvalID, `{"decision":"allow_once"}`, nil, &er); res.StatusCode != 403 || !strings.Contains(er.Message, "you asked for this task") {
		t.Errorf("alice approving her own call = %d %+v", res.StatusCode, er)
	}
	for _, name := range []string{"alice", "API:alice", "token:Alice", "api:alice", "bob"} {
		res := alice.do("POST", "/api/v1/approvals/"+approvalID, `{"decision":"allow_once","approver":"`+name+`"}`, nil, &er)
		if res.StatusCode != 400 || !strings.Contains(er.Message, "approver field is not accepted") {
			t.Errorf("alice claiming approver %q = %d %+v", name, res.StatusCode, er)
		}
	}
	var v map[string]any
	if e.do("GET", "/api/v1/tasks/"+taskID, "", nil, &v); v["state"] != "waiting_approval" {
		t.Fatalf("the task moved on without an approver: %v", v["state"])
	}
	bob := e.as(e.newToken("bob", store.RoleApprove, ""))
	var ap map[string]any
	if res := bob.do("POST", "/api/v1/approvals/"+approvalID, `{"decision":"allow_once"}`, nil, &ap); res.StatusCode != 200 || ap["decided_by"] != "token:bob" {
		t.Fatalf("bob approving = %d %v", res.StatusCode, ap)
	}
	e.waitTask(taskID, "succeeded")
}

// TestIdentityFieldsAreRefused: a body cannot name its requester.
func TestIdentityFieldsAreRefused(t *testing.T) {
	e, alice, taskID, _ := parkedTask(t)
	var er struct{ Code, Message string }
	if res := e.do("POST", "/api/v1/tasks", `{"prompt":"x","requester":"alice"}`, nil, &er); res.StatusCode != 400 ||
		er.Message != "the requester field is not accepted: the requester is the principal of the bearer token (token:admin)" {
		t.Errorf("create with a requester = %d %+v", res.StatusCode, er)
	}
	if res := alice.do("POST", "/api/v1/tasks/"+taskID+"/messages", `{"text":"x","requester":""}`, nil, &er); res.StatusCode != 400 || !strings.Contains(er.Message, "requester field") {
		t.Errorf("message with a requester = %d %+v", res.StatusCode, er)
	}
	// Her own task: alice may steer it; an admin may too.
	if st, _ := alice.status("POST", "/api/v1/tasks/"+taskID+"/messages", `{"text":"also X"}`); st != 202 {
		t.Errorf("alice steering her task = %d", st)
	}
	if st, _ := e.status("POST", "/api/v1/tasks/"+taskID+"/cancel", ""); st != 202 {
		t.Errorf("admin cancelling alice's task = %d", st)
	}
}
