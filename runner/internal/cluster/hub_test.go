package cluster

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"reasonix/runner/store"
)

// memEvents is an EventReader over a slice.
type memEvents struct {
	mu  sync.Mutex
	evs []store.Event
}

func (m *memEvents) Events(_ context.Context, _ string, after int64, limit int) ([]store.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Event
	for _, e := range m.evs {
		if e.Seq > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memEvents) add(seq int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evs = append(m.evs, store.Event{Seq: seq})
}

// TestFollowWakesOnNotify: Follow sends the stored events after the given
// one, then a new event as soon as Notify says the log grew — not at the
// next poll — and closes its channel when ctx ends.
func TestFollowWakesOnNotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &memEvents{}
		st.add(1)
		st.add(2)
		hub := NewHub()
		ctx, cancel := context.WithCancel(t.Context())
		ch := hub.Follow(ctx, st, "t1", 1, time.Hour, nil)
		if e := <-ch; e.Seq != 2 {
			t.Fatalf("first event %d, want 2", e.Seq)
		}
		start := time.Now()
		st.add(3)
		hub.Notify("t1")
		if e := <-ch; e.Seq != 3 {
			t.Fatalf("next event %d, want 3", e.Seq)
		}
		if waited := time.Since(start); waited >= time.Hour {
			t.Fatalf("the event came with the poll (%s), not the notification", waited)
		}
		cancel()
		if _, open := <-ch; open {
			t.Fatal("the channel stayed open after ctx ended")
		}
	})
}
