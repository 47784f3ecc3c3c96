package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/apitype"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestGCAPI: POST /api/v1/gc is for admins; a dry run lists a finished
// task's scratch directory and history past their retention and removes
// nothing; the real run removes both and keeps the task and its result.
func TestGCAPI(t *testing.T) {
	var skew atomic.Int64 // how far the shared clock is ahead
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	st := storetest.SQLite(t, store.Config{Now: clock})
	scratch := t.TempDir()
	svc := runnertest.Start(t, runnertest.Options{Provider: agenttest.NewScriptedProvider(agenttest.Turn{Text: "done"}),
		Store: st, Now: clock, Configure: func(c *runner.Config) { c.ScratchDir = scratch }})
	if _, err := st.RegisterBootstrapToken(context.Background(), store.BootstrapName, token); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	e := &env{t: t, svc: svc, st: st, srv: srv, secret: token}

	var c struct{ ID string }
	if res := e.do("POST", "/api/v1/tasks", `{"prompt":"hello"}`, nil, &c); res.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	e.waitTask(c.ID, "succeeded")
	if _, err := os.Stat(filepath.Join(scratch, c.ID)); err != nil {
		t.Fatalf("the task has no scratch directory: %v", err)
	}

	approver := e.as(e.newToken("bob", store.RoleApprove, ""))
	if code, cd := approver.status("POST", "/api/v1/gc", `{"dry_run":true}`); code != http.StatusForbidden || cd != "forbidden" {
		t.Fatalf("gc by an approver: %d %s, want 403", code, cd)
	}
	// Fresh: nothing is due.
	var rep apitype.GCReport
	if res := e.do("POST", "/api/v1/gc", `{"dry_run":true}`, nil, &rep); res.StatusCode != http.StatusOK || len(rep.Items) != 0 {
		t.Fatalf("gc of a fresh task: %d %+v", res.StatusCode, rep)
	}

	skew.Store(int64(100 * 24 * time.Hour))
	find := func(rep apitype.GCReport, what string) *apitype.GCItem {
		for i, it := range rep.Items {
			if it.TaskID == c.ID && it.What == what {
				return &rep.Items[i]
			}
		}
		return nil
	}
	rep = apitype.GCReport{}
	if res := e.do("POST", "/api/v1/gc", `{"dry_run":true}`, nil, &rep); res.StatusCode != http.StatusOK || !rep.DryRun {
		t.Fatalf("dry run: %d %+v", res.StatusCode, rep)
	}
	h, s := find(rep, "history"), find(rep, "scratch")
	if h == nil || h.Action != apitype.GCRemove || h.Rows == 0 || s == nil || s.Action != apitype.GCRemove || rep.Removed != 2 {
		t.Fatalf("dry run = %+v", rep)
	}
	if msgs, err := st.Messages(context.Background(), c.ID); err != nil || len(msgs) == 0 {
		t.Fatalf("a dry run pruned the conversation: %d, %v", len(msgs), err)
	}
	if _, err := os.Stat(filepath.Join(scratch, c.ID)); err != nil {
		t.Fatalf("a dry run removed the scratch directory: %v", err)
	}

	rep = apitype.GCReport{}
	if res := e.do("POST", "/api/v1/gc", `{}`, nil, &rep); res.StatusCode != http.StatusOK || rep.DryRun || find(rep, "history") == nil || find(rep, "scratch") == nil {
		t.Fatalf("gc: %d %+v", res.StatusCode, rep)
	}
	if msgs, err := st.Messages(context.Background(), c.ID); err != nil || len(msgs) != 0 {
		t.Fatalf("after gc the conversation has %d messages, %v", len(msgs), err)
	}
	if _, err := os.Stat(filepath.Join(scratch, c.ID)); !os.IsNotExist(err) {
		t.Fatalf("after gc the scratch directory: %v", err)
	}
	task := e.waitTask(c.ID, "succeeded")
	if res, _ := task["result"].(map[string]any); res == nil || res["final_answer"] != "done" {
		t.Fatalf("the task after gc: %v", task)
	}
	rep = apitype.GCReport{}
	if res := e.do("POST", "/api/v1/gc", `{"dry_run":true}`, nil, &rep); res.StatusCode != http.StatusOK || len(rep.Items) != 0 {
		t.Fatalf("gc again: %d %+v", res.StatusCode, rep)
	}
}
