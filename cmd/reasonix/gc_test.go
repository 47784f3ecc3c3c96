package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestGCDryRunOutput: `reasonix gc --dry-run` asks the service for a dry
// run and prints each item's task, what, action and reason, then a
// summary; without --dry-run it asks for the real thing.
func TestGCDryRunOutput(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/gc", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, strings.TrimSpace(string(b)))
		mu.Unlock()
		var req struct {
			DryRun bool `json:"dry_run"`
		}
		json.Unmarshal(b, &req)
		json.NewEncoder(w).Encode(map[string]any{"dry_run": req.DryRun, "node": "n1", "removed": 2, "kept": 1, "bytes": 634880,
			"items": []map[string]any{
				{"task_id": "t_old", "what": "history", "action": "remove", "reason": "300 events, 120 messages, 90 tool calls, 0 other; succeeded finished 2026-08-01", "rows": 510, "bytes": 634880},
				{"task_id": "t_old", "what": "worktree", "action": "remove", "reason": "clean, published (0123456789ab); finished 2026-08-01"},
				{"task_id": "t_wip", "what": "worktree", "action": "keep", "reason": "uncommitted changes"},
			}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REASONIX_HOME", home)
	t.Setenv("REASONIX_API_TOKEN", "tok")

	out, stderr, code := cliRun("gc", "--dry-run", "--server", srv.URL)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("want a header, three items and a summary:\n%s", out)
	}
	for i, want := range [][]string{
		{"TASK", "WHAT", "ACTION", "REASON"},
		{"t_old", "history", "would remove", "300 events, 120 messages", "(620.0 KB)"},
		{"t_old", "worktree", "would remove", "clean, published (0123456789ab)"},
		{"t_wip", "worktree", "keep", "uncommitted changes"},
		{"node n1: would remove 2 (620.0 KB of history), kept 1"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	out, _, code = cliRun("gc", "--server", srv.URL)
	if code != exitOK || !strings.Contains(out, "node n1: removed 2") || strings.Contains(out, "would") {
		t.Fatalf("gc: exit %d\n%s", code, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || bodies[0] != `{"dry_run":true}` || bodies[1] != `{"dry_run":false}` {
		t.Fatalf("bodies sent = %q", bodies)
	}
}
