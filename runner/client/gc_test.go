package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"reasonix/runner/client"
)

// TestGCOutlastsTheRequestTimeout: GC waits for a service that takes
// longer than the client's per-request timeout (which the other calls
// keep: a task look-up is cut), as a first prune of a long history does.
func TestGCOutlastsTheRequestTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	stuck := make(chan struct{})
	defer close(stuck)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /api/v1/gc", func(w http.ResponseWriter, r *http.Request) {
		slow := time.NewTimer(10 * timeout)
		defer slow.Stop()
		select {
		case <-slow.C:
		case <-r.Context().Done():
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"node": "n1", "removed": 3})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, err := client.New(srv.URL, "tok", client.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Task(context.Background(), "t_1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a task look-up on a stuck service = %v, want the client's timeout", err)
	}
	rep, err := c.GC(context.Background(), false)
	if err != nil || rep.Node != "n1" || rep.Removed != 3 {
		t.Fatalf("GC = %+v, %v; want the slow service's answer", rep, err)
	}
}
