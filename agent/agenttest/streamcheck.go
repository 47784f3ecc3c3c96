package agenttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
)

// The stream readers TestProvider checks every response with.

// cancelled starts a stream that would never end, cancels it once the
// server has the request (when arrived closes) or, with arrived nil, after
// the first chunk, and checks that the channel closes promptly, reports no
// success, and leaves no goroutine behind.
func cancelled(t *testing.T, p agent.Provider, arrived <-chan struct{}) {
	t.Helper()
	// Goroutines of earlier subtests (kept-alive connections, the fake
	// server) may still be winding down; only new ones count.
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch, err := p.Stream(ctx, UserRequest("x"))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if arrived == nil {
		select {
		case c := <-ch:
			if c.Type != agent.ChunkText {
				t.Fatalf("first chunk = %+v, want the text the server sent", c)
			}
		case <-time.After(promptly):
			t.Fatal("no first chunk")
		}
	} else {
		select {
		case <-arrived:
		case <-time.After(promptly):
			t.Fatal("the request did not reach the server")
		}
	}
	cancel()
	last := drainWithin(t, ch, promptly)
	if last != nil && last.Type == agent.ChunkDone {
		t.Errorf("a cancelled stream reported success")
	}
	if last != nil && last.Type == agent.ChunkError && !errors.Is(last.Err, context.Canceled) {
		t.Errorf("final error after cancel = %v, want one wrapping context.Canceled", last.Err)
	}
	closeIdle(p)
	if err := goleak.Find(before); err != nil {
		t.Errorf("goroutines left behind by a cancelled stream: %v", err)
	}
}

// drainWithin reads ch until it closes and returns the last chunk (nil when
// there was none); the channel must close within d.
func drainWithin(t *testing.T, ch <-chan agent.Chunk, d time.Duration) *agent.Chunk {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var last *agent.Chunk
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				return last
			}
			last = &c
		case <-timer.C:
			t.Fatalf("the channel was still open %v after cancellation", d)
		}
	}
}

// closeIdle drops the kept-alive connections of providers that pool them,
// whose goroutines would otherwise look leaked.
func closeIdle(p agent.Provider) {
	if c, ok := p.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
