package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"reasonix/runner/internal/execute"
	"reasonix/runner/store"
)

// emitLogged appends an event to the task's log and tells local
// subscribers; payload is marshalled to JSON (nil becomes {}). A lost event
// must not stop the work, so a failure is logged. Events the task's run
// queued on this node are written first, to keep the log in order.
func (s *Service) emitLogged(ctx context.Context, taskID, typ string, payload any) {
	raw, err := s.encodeEvent(typ, payload)
	if err != nil {
		s.log.Error("runner: event lost", "task", taskID, "type", typ, "err", err)
		return
	}
	if r := s.runFor(taskID); r != nil {
		r.FlushEvents()
	}
	s.write(context.WithoutCancel(ctx), taskID, store.EventInput{Type: typ, Payload: raw})
}

// event is one event a state change writes with itself.
type event struct {
	typ     string
	payload any
}

// announce encodes evs for a state change of task id that writes them in
// its own transaction (store.StateOpts.Events, Requeue): a change and its
// events are never one without the other. Events the task's run queued on
// this node are written first, to keep the log in order. An event that
// cannot be encoded is logged and left out; the change is still made.
// Tell subscribers with s.hub.Notify once it is.
func (s *Service) announce(id string, evs ...event) []store.EventInput {
	if r := s.runFor(id); r != nil {
		r.FlushEvents()
	}
	return s.encodeAll(id, evs...)
}

// encodeAll encodes evs of task id (for the log: "" before it exists),
// leaving out, and logging, what cannot be encoded.
func (s *Service) encodeAll(id string, evs ...event) []store.EventInput {
	out := make([]store.EventInput, 0, len(evs))
	for _, e := range evs {
		raw, err := s.encodeEvent(e.typ, e.payload)
		if err != nil {
			s.log.Error("runner: event lost", "task", id, "type", e.typ, "err", err)
			continue
		}
		out = append(out, store.EventInput{Type: e.typ, Payload: raw})
	}
	return out
}

// eventWriteTimeout bounds one write of events.
const eventWriteTimeout = 15 * time.Second

// write appends events to a task's log, tells local subscribers, and logs
// what could not be written.
func (s *Service) write(ctx context.Context, taskID string, evs ...store.EventInput) {
	if len(evs) == 0 {
		return
	}
	// A store that hangs must not hold the run (or its end, which waits
	// for the queue) forever: an event that cannot be written in time is
	// lost, and logged, like one whose write failed.
	ctx, cancel := context.WithTimeout(ctx, eventWriteTimeout)
	defer cancel()
	if _, err := s.st.AppendEvents(ctx, taskID, evs...); err != nil {
		for _, e := range evs {
			s.log.Error("runner: event lost", "task", taskID, "type", e.Type, "err", err)
		}
		return
	}
	s.hub.Notify(taskID)
}

// Subscribe streams task id's events with Seq > after: first those already
// stored, then new ones as they are appended, in order and without gaps.
// Events appended on this node arrive at once; those appended by another
// node within ControlInterval. The channel is closed when ctx ends or the
// store fails. An unknown task is an error wrapping ErrNotFound.
func (s *Service) Subscribe(ctx context.Context, id string, after int64) (<-chan store.Event, error) {
	if _, err := s.Task(ctx, id); err != nil {
		return nil, err
	}
	return s.hub.Follow(ctx, s.st, id, after, s.cfg.ControlInterval, s.log), nil
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

// eventSink is the service's event log as a run's event queue writes it.
type eventSink struct{ s *Service }

func (k eventSink) Write(ctx context.Context, taskID string, evs ...store.EventInput) {
	k.s.write(ctx, taskID, evs...)
}

func (k eventSink) Encode(typ string, payload any) (json.RawMessage, error) {
	return k.s.encodeEvent(typ, payload)
}

// newEventQueue starts the step-event queue of a run of task taskID.
func newEventQueue(s *Service, taskID string) *execute.EventQueue {
	return execute.NewEventQueue(eventSink{s}, s.log, s.now, taskID)
}
