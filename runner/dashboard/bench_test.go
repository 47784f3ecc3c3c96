package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"reasonix/runner"
	"reasonix/runner/dashboard"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// benchDash is a dashboard over a SQLite store holding n tasks (created in
// the store directly, so no worker runs them), and a signed-in request
// maker.
func benchDash(b *testing.B, n int) (*store.Store, http.Handler, func(path string) *http.Request) {
	return benchDashOn(b, storetest.SQLite, n)
}

// benchDashOn is benchDash on the store open opens.
func benchDashOn(b *testing.B, open storetest.Opener, n int) (*store.Store, http.Handler, func(path string) *http.Request) {
	b.Helper()
	ctx := context.Background()
	st := open(b, store.Config{})
	// No task runs here: keep the queue's polling from sharing the SQLite
	// connection with the pages being measured.
	svc := runnertest.Start(b, runnertest.Options{Store: st, Configure: func(c *runner.Config) {
		c.PollInterval, c.ControlInterval, c.SweepInterval = time.Hour, time.Hour, time.Hour
	}})
	for i := range n {
		if _, _, err := st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Requester: "token:bench", Workspace: "repo",
			Prompt: fmt.Sprintf("task %d: fix the flaky test in package %d and update the changelog", i, i%37)}, fmt.Sprint("bench-", i)); err != nil {
			b.Fatal(err)
		}
	}
	tok, _, err := st.CreateToken(ctx, store.NewToken{Name: "bench", Role: store.RoleAdmin})
	if err != nil {
		b.Fatal(err)
	}
	secret, _, err := st.CreateWebSession(ctx, tok, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	d, err := dashboard.New(dashboard.Config{Service: svc, Store: st, Logger: storetest.Quiet()})
	if err != nil {
		b.Fatal(err)
	}
	return st, d, func(path string) *http.Request {
		r := httptest.NewRequest("GET", path, nil)
		r.AddCookie(&http.Cookie{Name: "rx_session", Value: secret})
		return r
	}
}

func serve(b *testing.B, h http.Handler, req func(string) *http.Request, path string) {
	b.Helper()
	var size int
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req(path))
		if w.Code != 200 {
			b.Fatalf("%s = %d", path, w.Code)
		}
		size = w.Body.Len()
	}
	b.ReportMetric(float64(size)/1024, "KB/page")
}

// BenchmarkTasksPage is the server time of the task list: the default page
// of 50 and the largest (200 rows), over 500 and 10,000 stored tasks.
func BenchmarkTasksPage(b *testing.B) {
	for _, c := range []struct{ tasks, rows int }{{500, 50}, {500, 200}, {10000, 50}, {10000, 200}} {
		b.Run(fmt.Sprintf("tasks=%d/rows=%d", c.tasks, c.rows), func(b *testing.B) {
			_, h, req := benchDash(b, c.tasks)
			serve(b, h, req, fmt.Sprintf("/?limit=%d", c.rows))
		})
	}
	b.Run("tasks=10000/search", func(b *testing.B) {
		_, h, req := benchDash(b, 10000)
		serve(b, h, req, "/?q=package+36")
	})
	// The same on Postgres (skipped without a test database; see storetest).
	b.Run("postgres/tasks=10000/rows=50", func(b *testing.B) {
		_, h, req := benchDashOn(b, storetest.Postgres, 10000)
		serve(b, h, req, "/?limit=50")
	})
}

// BenchmarkTaskPage is the server time of a task page whose task has 2,000
// events (the page shows the first 500 and links on): the instruction
// files its prompt held, a pull request's CI with checks, then 1,998
// calls' starts and ends.
func BenchmarkTaskPage(b *testing.B) {
	st, h, req := benchDash(b, 1)
	ctx := context.Background()
	page, err := st.ListTasks(ctx, store.TaskFilter{})
	if err != nil {
		b.Fatal(err)
	}
	id := page.Tasks[0].ID
	for _, ev := range []struct {
		typ     string
		payload string
	}{
		{"instructions", `{"commit":"0123456789abcdef","files":[{"scope":"user","path":"AGENTS.md","bytes":900},{"scope":"project","path":"AGENTS.md","bytes":12000}]}`},
		{"ci_updated", `{"state":"waiting","commit":"0123456789abcdef","pr":{"url":"https://forge.test/p/1","number":1},"checks":[{"name":"build","state":"success","url":"https://ci.test/1"},{"name":"test","state":"pending"}]}`},
	} {
		if _, err := st.AppendEvent(ctx, id, ev.typ, []byte(ev.payload)); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 1998 {
		typ, payload := "tool_finished", map[string]any{"tool": "bash", "result": fmt.Sprintf("line %d of output\n", i), "step": i}
		if i%2 == 0 {
			typ, payload = "tool_started", map[string]any{"tool": "bash", "args": `{"command":"go test ./..."}`, "step": i}
		}
		raw, _ := json.Marshal(payload)
		if _, err := st.AppendEvent(ctx, id, typ, raw); err != nil {
			b.Fatal(err)
		}
	}
	serve(b, h, req, "/tasks/"+id)
}
