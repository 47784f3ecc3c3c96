// Package execute holds pieces of one task's execution that need nothing
// of the service but what they are handed: the run's event queue, and the
// write-ahead journal's keys, argument hashes and the settling of calls a
// crash left without a result (journal.go). The rest of a run (claim,
// session, the journaled tool, observer, finish) is still in package
// runner; it moves here as it loses its back-pointers to runner.Service.
package execute

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"reasonix/runner/store"
)

// Sink is what a queue writes through: the service's event log.
type Sink interface {
	// Write appends evs to the task's log, tells its subscribers, and
	// logs (never returns) what could not be written.
	Write(ctx context.Context, taskID string, evs ...store.EventInput)
	// Encode marshals an event's payload, every known secret masked.
	Encode(typ string, payload any) (json.RawMessage, error)
}

// EventQueue writes a run's step events (tool started and finished, usage,
// plan, …) behind the run instead of in its way: the agent's next step does
// not wait for a database round trip per event, and what piles up while one
// write is in flight goes in the next one, as one statement. The transcript
// and the tool journal, which a resumed run is rebuilt from, are still
// written before the step goes on; these events only report it.
//
// A write waits EventLinger after the first event of a batch, so a step's
// events (its usage, the tool's start and finish) share one statement and
// one commit instead of taking one each: on a busy database the commits,
// not the rows, are the cost. Flush and Close do not wait.
//
// Order holds: one writer per run, in the order the events were queued, and
// every other event of the task (a state change, an approval) is written
// only after the queue is flushed (runner's Service.emitLogged), so the log reads as
// the run happened. The run closes its queue before it ends; events still
// queued when the process dies are lost, like an event whose write was
// under way.
type EventQueue struct {
	sink   Sink
	log    *slog.Logger
	now    func() time.Time
	taskID string

	mu      sync.Mutex
	pending []store.EventInput
	writing bool       // a batch is being written
	idle    *sync.Cond // broadcast when pending is empty and nothing is being written
	closed  bool
	waiting int // flush calls waiting: the writer must not linger
	// holdUntil: the run holds a step write that will take the queued
	// events (Hold); the writer lingers until then rather than write them
	// in a commit of their own.
	holdUntil time.Time

	kick  chan struct{} // capacity 1: there is something to write
	hurry chan struct{} // capacity 1: write now, do not linger
	done  chan struct{}
}

// EventLinger is how long the writer gathers events before writing them:
// longer than one step's tool call takes, short enough that a chat thread
// or a live stream does not notice.
const EventLinger = 50 * time.Millisecond

// MaxEventBatch bounds one write; a busier queue takes several.
const MaxEventBatch = 64

// NewEventQueue starts the queue of task taskID's step events; Close
// stops it.
func NewEventQueue(sink Sink, log *slog.Logger, now func() time.Time, taskID string) *EventQueue {
	q := &EventQueue{sink: sink, log: log, now: now, taskID: taskID, kick: make(chan struct{}, 1), hurry: make(chan struct{}, 1), done: make(chan struct{})}
	q.idle = sync.NewCond(&q.mu)
	go q.loop()
	return q
}

// Add queues an event; payload is marshalled to JSON and masked here, in
// the run's goroutine. After close it writes at once.
func (q *EventQueue) Add(typ string, payload any) {
	raw, err := q.sink.Encode(typ, payload)
	if err != nil {
		q.log.Error("runner: event lost", "task", q.taskID, "type", typ, "err", err)
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.sink.Write(context.Background(), q.taskID, store.EventInput{Type: typ, Payload: raw})
		return
	}
	q.pending = append(q.pending, store.EventInput{Type: typ, Payload: raw, Time: q.now()})
	select { // under mu: close cannot close kick meanwhile
	case q.kick <- struct{}{}:
	default:
	}
	q.mu.Unlock()
}

// Flush waits until every event queued so far is written (or lost, and
// logged).
func (q *EventQueue) Flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting++
	defer func() { q.waiting-- }()
	q.hasten()
	for len(q.pending) > 0 || q.writing {
		q.idle.Wait()
	}
}

// Take hands the events queued so far to a step write of the run
// (runner's run.writeStep), which writes them with the step, and holds the writer
// off until Taken reports how that went: the log stays in order.
func (q *EventQueue) Take() []store.EventInput {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.writing {
		q.idle.Wait()
	}
	batch := q.pending
	q.pending = nil
	q.writing = true
	return batch
}

// Hold tells the writer that a step write of the run will take what is
// queued within d (the run holds a tool result for its next step): it
// lingers up to d, not EventLinger, so the step's events share the step's
// commit. Flush, Close and the step write's Take end the hold.
func (q *EventQueue) Hold(d time.Duration) {
	q.mu.Lock()
	q.holdUntil = time.Now().Add(d) // the wall clock: a test's frozen clock must not hold it for ever
	q.mu.Unlock()
}

// Taken ends a Take: the step write that took batch succeeded (ok), or
// batch is written on its own now, still before anything queued later.
func (q *EventQueue) Taken(batch []store.EventInput, ok bool) {
	if !ok {
		q.sink.Write(context.Background(), q.taskID, batch...)
	}
	q.mu.Lock()
	q.writing = false
	q.holdUntil = time.Time{}
	q.idle.Broadcast()
	q.mu.Unlock()
}

// Close flushes the queue and stops its writer; later events are written
// directly.
func (q *EventQueue) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.kick)
	}
	q.hasten()
	q.mu.Unlock()
	<-q.done
}

// hasten ends the writer's current linger.
func (q *EventQueue) hasten() {
	select {
	case q.hurry <- struct{}{}:
	default:
	}
}

// linger waits EventLinger for more events — longer while the run holds
// a step write that will take them (Hold) — or not at all when a flush is
// waiting or the queue is closing. A hurry left over from a flush that
// found nothing to wait for is dropped first; one sent after the check
// below ends the wait.
func (q *EventQueue) linger() {
	select {
	case <-q.hurry:
	default:
	}
	wait := EventLinger
	for {
		q.mu.Lock()
		urgent := q.waiting > 0 || q.closed
		q.mu.Unlock()
		if urgent {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-q.hurry:
			t.Stop()
			return
		}
		q.mu.Lock()
		wait = time.Until(q.holdUntil)
		q.mu.Unlock()
		if wait <= 0 {
			return
		}
	}
}

func (q *EventQueue) loop() {
	defer close(q.done)
	for range q.kick {
		q.linger()
		for {
			q.mu.Lock()
			for q.writing { // a step write took the events before these
				q.idle.Wait()
			}
			n := min(len(q.pending), MaxEventBatch)
			batch := q.pending[:n:n]
			q.pending = q.pending[n:]
			q.writing = n > 0
			if n == 0 {
				q.pending = nil
				q.idle.Broadcast()
				q.mu.Unlock()
				break
			}
			q.mu.Unlock()
			q.sink.Write(context.Background(), q.taskID, batch...)
			q.mu.Lock()
			q.writing = false
			q.idle.Broadcast()
			q.mu.Unlock()
		}
	}
	// close drained the channel: write what came after the last kick.
	q.mu.Lock()
	for q.writing {
		q.idle.Wait()
	}
	batch := q.pending
	q.pending, q.writing = nil, len(batch) > 0
	q.mu.Unlock()
	q.sink.Write(context.Background(), q.taskID, batch...)
	q.mu.Lock()
	q.writing = false
	q.idle.Broadcast()
	q.mu.Unlock()
}
