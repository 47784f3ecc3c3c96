// Package cluster holds what a node of `reasonix serve` does as one of
// several sharing a store: its row in the nodes table and the heartbeat
// that keeps it fresh, the list of nodes, the hand-over of running tasks
// (a drain's requeue, the take-over of a dead node's tasks, crash recovery
// at start), the scratch directories that travel between nodes with their
// tasks, and the note a continuation gets about the changes its workspace
// lost. It also holds the hub that wakes a node's event subscribers.
//
// Like package maintenance, each piece is a small type handed exactly what
// it needs — a store interface of the methods it calls, the node's id, a
// clock, the service's event writer and a callback or two — and never the
// service itself: the code here can be read, and tested, without package
// runner, which keeps the public API (Service.Nodes, runner.NodeID) and
// builds these pieces in New.
package cluster

import (
	"context"
	"log/slog"
	"time"

	"reasonix/runner/store"
)

// Event is one event a state change writes with itself.
type Event struct {
	Type    string
	Payload any
}

// Events is the service's writer of task events, as the cluster's code
// uses it. Both methods mask secrets and leave out, with a log line, what
// cannot be encoded.
type Events interface {
	// Emit appends one event to task id's log and wakes its subscribers;
	// a failure is logged, never returned: a lost event must not stop the
	// work.
	Emit(ctx context.Context, id, typ string, payload any)
	// Announce encodes evs for a state change of task id that writes them
	// in its own transaction (after the events its run queued on this
	// node), so a change and its events are never one without the other.
	Announce(id string, evs ...Event) []store.EventInput
}

// quiet returns log, or a logger that drops everything when it is nil.
func quiet(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// now returns clock, or time.Now when it is nil.
func now(clock func() time.Time) func() time.Time {
	if clock == nil {
		return time.Now
	}
	return clock
}
