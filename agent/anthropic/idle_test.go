package anthropic

import (
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestIdleStreamIsCut(t *testing.T) {
	srv, hits := agenttest.StallingServer(t, true, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n")
	p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL, Model: "m", IdleTimeout: 50 * time.Millisecond, MaxRetries: -1})
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream)
	if !strings.Contains(pe.Message, "idle") || hits.Load() != 1 {
		t.Fatalf("error %v after %d requests", pe, hits.Load())
	}
}

func TestSilentServerGetsOneMoreChance(t *testing.T) {
	srv, hits := agenttest.StallingServer(t, false, "")
	p, rec := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL, Model: "m", IdleTimeout: 50 * time.Millisecond, MaxRetries: 3})
	pe := agenttest.Collect(t, p, agenttest.UserRequest("x")).WantError(t, agent.ErrStream)
	if !strings.Contains(pe.Message, "no response") || hits.Load() != 2 || len(rec.Waits()) != 1 {
		t.Fatalf("error %v after %d requests, waits %v", pe, hits.Load(), rec.Waits())
	}
}
