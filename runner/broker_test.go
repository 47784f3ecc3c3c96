package runner

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/policy"
	"reasonix/runner/session"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

func newTestService(t *testing.T) *Service {
	t.Helper()
	svc, err := New(Config{Store: storetest.SQLite(t, store.Config{}), Logger: storetest.Quiet(),
		Providers: func(string) (session.Model, error) { return session.Model{}, errors.New("none") }})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestBrokerBindsCall: a decision answers exactly the call it was made for,
// once; a changed call asks again, and an allow_once is not reused.
func TestBrokerBindsCall(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	task, _, err := s.st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Requester: "api:a", Prompt: "p"}, "")
	if err != nil {
		t.Fatal(err)
	}
	b := &broker{s: s, task: task}
	reqA := policy.Request{Call: agent.Call{ID: "1", Tool: "bash", Args: json.RawMessage(`{"command":"make a"}`)}, Subject: "make a"}
	reqA2 := policy.Request{Call: agent.Call{ID: "9", Tool: "bash", Args: json.RawMessage(`{ "command" : "make a" }`)}, Subject: "make a"}
	reqB := policy.Request{Call: agent.Call{ID: "2", Tool: "bash", Args: json.RawMessage(`{"command":"make b"}`)}, Subject: "make b"}

	var se *suspendError
	if _, err := b.Approve(ctx, reqA); !errors.As(err, &se) || !errors.Is(err, agent.ErrSuspend) {
		t.Fatalf("first ask: %v, want a suspension", err)
	}
	if _, err := s.Decide(ctx, Decision{ApprovalID: se.approval.ID, Decision: "allow_once", Approver: "bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Approve(ctx, reqB); !errors.Is(err, agent.ErrSuspend) {
		t.Fatalf("a different call: %v, want a new request", err)
	}
	ans, err := b.Approve(ctx, reqA2) // same call, other spacing and call id
	if err != nil || ans.Choice != policy.AllowOnce {
		t.Fatalf("the approved call: %+v, %v", ans, err)
	}
	if _, err := b.Approve(ctx, reqA); !errors.Is(err, agent.ErrSuspend) {
		t.Fatalf("allow_once reused: %v", err)
	}
}

func TestCallPreview(t *testing.T) {
	req := policy.Request{Call: agent.Call{Tool: "edit_file", Args: json.RawMessage(`{"path":"a.go","old_string":"x := 1\n","new_string":"x := 2\n"}`)}}
	got := callPreview(req)
	for _, want := range []string{"--- a.go", "+++ a.go", "-x := 1", "+x := 2"} {
		if !strings.Contains(got, want) {
			t.Errorf("preview %q lacks %q", got, want)
		}
	}
	req = policy.Request{Call: agent.Call{Tool: "write_file", Args: json.RawMessage(`{"path":"b.txt","content":"` + strings.Repeat("line\\n", 5000) + `"}`)}}
	if got := callPreview(req); len(got) > maxPreview || !strings.Contains(got, "+line") {
		t.Errorf("write preview: %d bytes", len(got))
	}
	req = policy.Request{Call: agent.Call{Tool: "bash"}, Preview: "go test ./..."}
	if got := callPreview(req); got != "go test ./..." {
		t.Errorf("bash preview = %q", got)
	}
}
