package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"reasonix/runner/store"
)

// eventQueue writes a run's step events (tool started and finished, usage,
// plan, …) behind the run instead of in its way: the agent's next step does
// not wait for a database round trip per event, and what piles up while one
// write is in flight goes in the next one, as one statement. The transcript
// and the tool journal, which a resumed run is rebuilt from, are still
// written before the step goes on; these events only report it.
//
// A write waits eventLinger after the first event of a batch, so a step's
// events (its usage, the tool's start and finish) share one statement and
// one commit instead of taking one each: on a busy database the commits,
// not the rows, are the cost. flush and close do not wait.
//
// Order holds: one writer per run, in the order the events were queued, and
// every other event of the task (a state change, an approval) is written
// only after the queue is flushed (Service.emitLogged), so the log reads as
// the run happened. The run closes its queue before it ends; events still
// queued when the process dies are lost, like an event whose write was
// under way.
type eventQueue struct {
	s      *Service
	taskID string

	mu      sync.Mutex
	pending []store.EventInput
	writing bool       // a batch is being written
	idle    *sync.Cond // broadcast when pending is empty and nothing is being written
	closed  bool
	waiting int // flush calls waiting: the writer must not linger

	kick  chan struct{} // capacity 1: there is something to write
	hurry chan struct{} // capacity 1: write now, do not linger
	done  chan struct{}
}

// eventLinger is how long the writer gathers events before writing them:
// longer than one step's tool call takes, short enough that a chat thread
// or a live stream does not notice.
const eventLinger = 50 * time.Millisecond

// maxEventBatch bounds one write; a busier queue takes several.
const maxEventBatch = 64

func newEventQueue(s *Service, taskID string) *eventQueue {
	q := &eventQueue{s: s, taskID: taskID, kick: make(chan struct{}, 1), hurry: make(chan struct{}, 1), done: make(chan struct{})}
	q.idle = sync.NewCond(&q.mu)
	go q.loop()
	return q
}

// add queues an event; payload is marshalled to JSON and masked here, in
// the run's goroutine. After close it writes at once.
func (q *eventQueue) add(typ string, payload any) {
	raw, err := q.s.encodeEvent(typ, payload)
	if err != nil {
		q.s.log.Error("runner: event lost", "task", q.taskID, "type", typ, "err", err)
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.s.write(context.Background(), q.taskID, store.EventInput{Type: typ, Payload: raw})
		return
	}
	q.pending = append(q.pending, store.EventInput{Type: typ, Payload: raw, Time: q.s.now()})
	select { // under mu: close cannot close kick meanwhile
	case q.kick <- struct{}{}:
	default:
	}
	q.mu.Unlock()
}

// flush waits until every event queued so far is written (or lost, and
// logged).
func (q *eventQueue) flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting++
	defer func() { q.waiting-- }()
	q.hasten()
	for len(q.pending) > 0 || q.writing {
		q.idle.Wait()
	}
}

// take hands the events queued so far to a step write of the run
// (run.writeStep), which writes them with the step, and holds the writer
// off until taken reports how that went: the log stays in order.
func (q *eventQueue) take() []store.EventInput {
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

// taken ends a take: the step write that took batch succeeded (ok), or
// batch is written on its own now, still before anything queued later.
func (q *eventQueue) taken(batch []store.EventInput, ok bool) {
	if !ok {
		q.s.write(context.Background(), q.taskID, batch...)
	}
	q.mu.Lock()
	q.writing = false
	q.idle.Broadcast()
	q.mu.Unlock()
}

// close flushes the queue and stops its writer; later events are written
// directly.
func (q *eventQueue) close() {
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
func (q *eventQueue) hasten() {
	select {
	case q.hurry <- struct{}{}:
	default:
	}
}

// linger waits eventLinger for more events, or not at all when a flush is
// waiting or the queue is closing. A hurry left over from a flush that
// found nothing to wait for is dropped first; one sent after the check
// below ends the wait.
func (q *eventQueue) linger() {
	select {
	case <-q.hurry:
	default:
	}
	q.mu.Lock()
	urgent := q.waiting > 0 || q.closed
	q.mu.Unlock()
	if urgent {
		return
	}
	t := time.NewTimer(eventLinger)
	defer t.Stop()
	select {
	case <-t.C:
	case <-q.hurry:
	}
}

func (q *eventQueue) loop() {
	defer close(q.done)
	for range q.kick {
		q.linger()
		for {
			q.mu.Lock()
			for q.writing { // a step write took the events before these
				q.idle.Wait()
			}
			n := min(len(q.pending), maxEventBatch)
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
			q.s.write(context.Background(), q.taskID, batch...)
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
	q.s.write(context.Background(), q.taskID, batch...)
	q.mu.Lock()
	q.writing = false
	q.idle.Broadcast()
	q.mu.Unlock()
}

// encodeEvent marshals an event's payload (nil becomes {}) with every known
// secret masked.
func (s *Service) encodeEvent(typ string, payload any) (json.RawMessage, error) {
	if payload == nil {
		return nil, nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("runner: encode %s event: %w", typ, err)
	}
	return s.redact.Bytes(b), nil
}
