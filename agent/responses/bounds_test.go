package responses

import (
	"strings"
	"testing"

	"reasonix/agent"
)

// A server that streams without end (here: keep-alive events, which no
// idle watchdog notices) is cut at max_stream_bytes and not asked again.
func TestRunawayStreamStopsAtMaxStreamBytes(t *testing.T) {
	body := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n" + strings.Repeat("event: response.in_progress\ndata: {\"type\":\"response.in_progress\"}\n\n", 2000)
	api := newFakeAPI(t, reply{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, body: body})
	cfg := api.config()
	cfg.MaxStreamBytes = 4096
	p, rec := newTestProvider(t, cfg)
	pe := wantError(t, mustStream(t, p, userRequest("x")), agent.ErrOutputTooLarge)
	if !strings.Contains(pe.Message, "4096 bytes (max_stream_bytes)") || api.requests() != 1 || len(rec.waits()) != 0 {
		t.Fatalf("error %v after %d requests, waits %v", pe, api.requests(), rec.waits())
	}
	if agent.Reason(pe) != "provider.output_too_large" {
		t.Errorf("reason = %q", agent.Reason(pe))
	}
}

func TestMaxStreamBytesDefaultsAndValidates(t *testing.T) {
	p, err := New(agent.ProviderConfig{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	p.CloseIdleConnections()
	if p.maxStream != DefaultMaxStreamBytes {
		t.Errorf("default max stream bytes = %d", p.maxStream)
	}
	if _, err := New(agent.ProviderConfig{Model: "m", MaxStreamBytes: -1}); err == nil || !strings.HasPrefix(err.Error(), Kind+": ") {
		t.Errorf("negative bound: %v", err)
	}
}
