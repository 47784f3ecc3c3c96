package execute

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"reasonix/runner/store"
)

// recordSink keeps what is written, in order.
type recordSink struct {
	mu    sync.Mutex
	types []string
}

func (k *recordSink) Write(_ context.Context, _ string, evs ...store.EventInput) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range evs {
		k.types = append(k.types, e.Type)
	}
}

func (k *recordSink) Encode(string, any) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }

// TestTakeKeepsOrder: events a step write took, and then could not write,
// reach the log before any queued after them, and the queue's own writer
// waits for the step meanwhile.
func TestTakeKeepsOrder(t *testing.T) {
	sink := &recordSink{}
	q := NewEventQueue(sink, slog.New(slog.DiscardHandler), time.Now, "t1")
	q.Add("a", nil)
	q.Add("b", nil)
	taken := q.Take() // what the writer had not written yet
	q.Add("c", nil)
	q.Add("d", nil)
	q.Taken(taken, false) // the step failed: the queue writes them itself
	q.Flush()
	q.Close()
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(sink.types, want) {
		t.Fatalf("written %v; want %v", sink.types, want)
	}
}

// TestTakenWritten: events a step wrote are not written again.
func TestTakenWritten(t *testing.T) {
	sink := &recordSink{}
	q := NewEventQueue(sink, slog.New(slog.DiscardHandler), time.Now, "t1")
	q.Flush() // the writer is idle
	q.Add("a", nil)
	taken := q.Take()
	q.Taken(taken, true)
	q.Add("b", nil)
	q.Close()
	want := []string{"b"}
	if len(taken) == 0 { // the writer got to a first
		want = []string{"a", "b"}
	}
	if !slices.Equal(sink.types, want) {
		t.Fatalf("written %v (step took %d); want %v", sink.types, len(taken), want)
	}
}

// TestHoldLingers: while the run holds a step write (Hold), the queue's
// writer leaves the events for it past EventLinger, so they share the
// step's commit; a Take within the hold gets them, and once a hold ends
// unclaimed the writer writes them itself.
func TestHoldLingers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &recordSink{}
		q := NewEventQueue(sink, slog.New(slog.DiscardHandler), time.Now, "t1")
		defer q.Close()
		q.Hold(time.Second)
		q.Add("finished", nil)
		time.Sleep(5 * EventLinger) // the bubble's clock
		synctest.Wait()
		if got := sink.written(); len(got) != 0 {
			t.Fatalf("written during the hold: %v", got)
		}
		if taken := q.Take(); len(taken) != 1 || taken[0].Type != "finished" {
			t.Fatalf("Take = %v; want the held event", taken)
		} else {
			q.Taken(taken, true)
		}
		q.Hold(time.Second)
		q.Add("late", nil)
		time.Sleep(2 * time.Second) // no step write came
		synctest.Wait()
		if got, want := sink.written(), []string{"late"}; !slices.Equal(got, want) {
			t.Fatalf("written after the hold = %v; want %v", got, want)
		}
	})
}

func (k *recordSink) written() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.types)
}
