package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestTasksShowSplitsTheTime: `tasks show` shows a task's time split into
// running, waiting for approval and queued (the run's own duration_ms,
// its last slice, said 0s for a task that waited), and times with their
// zone.
func TestTasksShowSplitsTheTime(t *testing.T) {
	mux := http.NewServeMux()
	// The service splits the time (runner.Service.Durations); the CLI
	// prints the split it is sent.
	const task = `{"id":"t_1","state":"succeeded","source":"cli","requester":"token:erin","prompt":"p",
		"created_at":"2026-03-01T12:00:00Z","finished_at":"2026-03-01T12:25:17Z",
		"durations":{"queued_ms":2000,"running_ms":15000,"waiting_ms":1500000},
		"result":{"duration_ms":0,"tokens":{"prompt":10,"completion":5}}}`
	mux.HandleFunc("GET /api/v1/tasks", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"tasks":[`+task+`]}`)
	})
	mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, task) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REASONIX_HOME", home)
	t.Setenv("REASONIX_API_TOKEN", "tok")

	out, stderr, code := cliRun("tasks", "show", "t_1", "--server", srv.URL)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "time      ran 15s · waited 25m00s for approval · queued 2s\n") {
		t.Errorf("no split time:\n%s", out)
	}
	// The zone is the machine's: whichever it is, it is named.
	zoned := regexp.MustCompile(`(?m)^created   2026-03-0[12] \d\d:\d\d:00 [A-Za-z0-9+-]+\n(.|\n)*^ended     2026-03-0[12] \d\d:\d\d:17 [A-Za-z0-9+-]+$`)
	if !zoned.MatchString(out) {
		t.Errorf("times without their zone:\n%s", out)
	}
}
