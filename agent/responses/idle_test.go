package responses

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
)

// stallingServer sends headers (and first, when set) and then nothing until
// the client gives up.
func stallingServer(t *testing.T, headers bool, first string) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		// Reading the body to its end lets the server notice the client leaving.
		io.Copy(io.Discard, r.Body)
		if headers {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(first))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestIdleStreamIsCut(t *testing.T) {
	srv, hits := stallingServer(t, true, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n")
	p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL, Model: "m", IdleTimeout: 50 * time.Millisecond, MaxRetries: -1})
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream)
	if !strings.Contains(pe.Message, "idle") || hits.Load() != 1 {
		t.Fatalf("error %v after %d requests", pe, hits.Load())
	}
}

func TestSilentServerGetsOneMoreChance(t *testing.T) {
	srv, hits := stallingServer(t, false, "")
	p, rec := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL, Model: "m", IdleTimeout: 50 * time.Millisecond, MaxRetries: 3})
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrStream)
	if !strings.Contains(pe.Message, "no response") || hits.Load() != 2 || len(rec.waits()) != 1 {
		t.Fatalf("error %v after %d requests, waits %v", pe, hits.Load(), rec.waits())
	}
}
