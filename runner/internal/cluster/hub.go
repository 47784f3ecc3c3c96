package cluster

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"reasonix/runner/store"
)

// Hub tells subscribers of a task on this node that its log grew. It
// carries no events itself: subscribers read them from the store, which
// keeps the order and never loses one; the hub only saves them the wait
// of a poll. Events another node appends reach them with the poll.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[string]map[chan struct{}]struct{}{}} }

// Subscribe returns a channel that receives a signal (coalesced: at most
// one waits) whenever Notify is called for taskID, and the function that
// ends the subscription.
func (h *Hub) Subscribe(taskID string) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[taskID] == nil {
		h.subs[taskID] = map[chan struct{}]struct{}{}
	}
	h.subs[taskID][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[taskID], ch)
		if len(h.subs[taskID]) == 0 {
			delete(h.subs, taskID)
		}
	}
}

// Notify signals every subscriber of taskID; it never blocks.
func (h *Hub) Notify(taskID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[taskID] {
		select {
		case ch <- struct{}{}:
		default: // already signalled
		}
	}
}

// EventReader reads a task's events in order.
type EventReader interface {
	Events(ctx context.Context, taskID string, afterSeq int64, limit int) ([]store.Event, error)
}

// Follow streams task id's events with Seq > after: first those already
// stored, then new ones as they are appended, in order and without gaps;
// a Notify wakes it at once, otherwise it polls every poll. The channel is
// closed when ctx ends or the store fails.
func (h *Hub) Follow(ctx context.Context, st EventReader, id string, after int64, poll time.Duration, log *slog.Logger) <-chan store.Event {
	log = quiet(log)
	signal, unsubscribe := h.Subscribe(id)
	out := make(chan store.Event, 64)
	go func() {
		defer close(out)
		defer unsubscribe()
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			for {
				evs, err := st.Events(ctx, id, after, 500)
				if err != nil {
					if ctx.Err() == nil {
						log.Warn("runner: subscription read failed", "task", id, "err", err)
					}
					return
				}
				for _, ev := range evs {
					select {
					case out <- ev:
						after = ev.Seq
					case <-ctx.Done():
						return
					}
				}
				if len(evs) < 500 {
					break
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-signal:
			case <-t.C:
			}
		}
	}()
	return out
}
