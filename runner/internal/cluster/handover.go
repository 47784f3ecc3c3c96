package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"reasonix/runner/store"
)

// ErrDrained is the cancellation cause of runs a stopping node hands over:
// their steps did not finish within the drain timeout.
var ErrDrained = errors.New("runner: the node stopped; the task continues on another node")

// MaxAutoResumes bounds how often a task is handed over without a person:
// a task that takes its node down with it (memory, a runaway command) must
// not hop from node to node forever. Past it the task is interrupted and
// waits for `reasonix tasks resume`.
const MaxAutoResumes = 5

// Drain lets running steps finish until timeout passes, or until a
// quarter of what is left of ctx when that comes first (the runs then
// still have time to hand themselves over), then calls cancel, which cuts
// the runs still going with ErrDrained. It returns early when done is
// closed.
func Drain(ctx context.Context, timeout time.Duration, done <-chan struct{}, cancel func()) {
	d := timeout
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)*3/4)
	}
	timer := time.NewTimer(max(d, 0))
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	}
	cancel()
}

// HandOverStore is the part of the store that hands tasks over.
type HandOverStore interface {
	Task(ctx context.Context, id string) (store.Task, error)
	Requeue(ctx context.Context, id string, from []store.State, evs ...store.EventInput) (store.Task, error)
	RequeueStale(ctx context.Context, id, owner string, cutoff time.Time, evs ...store.EventInput) (store.Task, error)
	RunningTasks(ctx context.Context) ([]store.RunningTask, error)
	ListTasks(ctx context.Context, f store.TaskFilter) (store.TaskPage, error)
	JobRunning(ctx context.Context, id string) (bool, error)
	RenewJob(ctx context.Context, id string, state store.State) error
	Nodes(ctx context.Context) ([]store.Node, error)
	JournalReader
}

// HandOverConfig configures a HandOver; every field but Now and Log is
// required.
type HandOverConfig struct {
	Store HandOverStore
	// Node is this node's id.
	Node string
	// StaleAfter is when a silent running task belongs to a dead node.
	StaleAfter time.Duration
	Events     Events
	Hub        *Hub
	// Interrupt moves a running task whose run is gone to interrupted,
	// with an event saying why (the service's: it settles the spend).
	Interrupt func(ctx context.Context, id, reason string)
	// LostState is what becomes of a failed state change of task id (the
	// service's: a conflict is someone else's move, anything else an
	// error of the job).
	LostState func(ctx context.Context, id string, err error) error
	Now       func() time.Time // nil is time.Now
	Log       *slog.Logger
}

// HandOver puts running tasks whose run ended without an outcome back in
// the queue — a drain's, a dead node's, those this node was running when
// it died — so that another node, or this one, continues each from its
// last completed step.
type HandOver struct{ cfg HandOverConfig }

// NewHandOver builds a HandOver.
func NewHandOver(cfg HandOverConfig) *HandOver {
	cfg.Now, cfg.Log = now(cfg.Now), quiet(cfg.Log)
	return &HandOver{cfg: cfg}
}

// Requeue puts a running task of this node whose run a drain cut short
// back in the queue (see handOver).
func (h *HandOver) Requeue(ctx context.Context, id, reason string) error {
	return h.handOver(ctx, id, reason, func(evs []store.EventInput) (store.Task, error) {
		return h.cfg.Store.Requeue(ctx, id, []store.State{store.StateRunning}, evs...)
	})
}

// TakeOverStale puts a dead node's running task back in the queue, only
// while its heartbeat is still older than StaleAfter (store.RequeueStale):
// every node looks for such tasks, so the leader dying with them does not
// delay the take-over until River elects another, and a task is still
// taken over once.
func (h *HandOver) TakeOverStale(ctx context.Context, t store.RunningTask) error {
	return h.handOver(ctx, t.ID, "the node running this task stopped responding", func(evs []store.EventInput) (store.Task, error) {
		return h.cfg.Store.RequeueStale(ctx, t.ID, t.LeaseOwner, h.cfg.Now().Add(-h.cfg.StaleAfter), evs...)
	})
}

// handOver queues a running task whose run ended without an outcome
// (drained, or its node died) again with requeue, unless it was handed
// over MaxAutoResumes times already: then it is interrupted. requeue
// writes the hand-over's events with the change, so the next node's
// events come after them.
func (h *HandOver) handOver(ctx context.Context, id, reason string, requeue func([]store.EventInput) (store.Task, error)) error {
	t, err := h.cfg.Store.Task(ctx, id)
	if err != nil {
		return h.cfg.LostState(ctx, id, err)
	}
	if t.Attempt >= MaxAutoResumes {
		h.cfg.Interrupt(ctx, id, reason+"; it was handed over too often to continue on its own")
		return nil
	}
	_, err = requeue(h.cfg.Events.Announce(id, Event{"task_released", map[string]any{"node": h.cfg.Node, "reason": reason, "attempt": t.Attempt}},
		Event{"task_state", map[string]any{"state": store.StateQueued, "reason": "released"}}))
	if err != nil {
		return h.cfg.LostState(ctx, id, err)
	}
	h.cfg.Hub.Notify(id)
	h.cfg.Log.Info("runner: task handed over", "task", id, "reason", reason)
	return nil
}

// Recover marks interrupted every running task that this node owned (it
// died running them; the process groups their tool calls left behind are
// killed first) and queues again those whose node stopped sending
// heartbeats, then requeues the parked tasks whose job died (see
// recoverParked).
func (h *HandOver) Recover(ctx context.Context) error {
	running, err := h.cfg.Store.RunningTasks(ctx)
	if err != nil {
		return fmt.Errorf("runner: crash recovery: %w", err)
	}
	for _, t := range running {
		if t.LeaseOwner != h.cfg.Node && !h.Stale(t) {
			continue
		}
		if t.LeaseOwner != h.cfg.Node {
			// Another node died running it: take it over.
			if err := h.TakeOverStale(ctx, t); err != nil {
				return fmt.Errorf("runner: crash recovery: %w", err)
			}
			continue
		}
		// This node died running it. The crash may have been the task's
		// own doing, so a person decides whether it runs again. Another
		// node's process numbers mean nothing here: only ours are killed.
		KillOrphans(ctx, h.cfg.Store, t.ID, h.cfg.Log)
		h.cfg.Interrupt(ctx, t.ID, "the service stopped while this task ran")
	}
	return h.recoverParked(ctx, func(owner string) bool { return owner == h.cfg.Node })
}

// RecoverDeadNodesParked does for the parked tasks of nodes that died
// what Recover does at start for this node's own (recoverParked): a node
// killed in a CI read or before its snooze was recorded may never start
// again, and nothing else would reach the task until River's rescuer, an
// hour later. A node is dead when it is not stopped and its heartbeat is
// older than StaleAfter. Only the node list is read while every node lives.
func (h *HandOver) RecoverDeadNodesParked(ctx context.Context) error {
	nodes, err := h.cfg.Store.Nodes(ctx)
	if err != nil {
		return fmt.Errorf("runner: dead nodes' parked tasks: %w", err)
	}
	dead := map[string]bool{}
	for _, n := range nodes {
		if n.ID != h.cfg.Node && n.State != store.NodeStopped && h.cfg.Now().Sub(n.HeartbeatAt) > h.cfg.StaleAfter {
			dead[n.ID] = true
		}
	}
	if len(dead) == 0 {
		return nil
	}
	return h.recoverParked(ctx, func(owner string) bool { return dead[owner] })
}

// recoverParked gives a job back to the parked tasks of the owners whose
// process died in their job (this node at start, or a dead node): one parked on an approval whose job never recorded
// its snooze (the process died between setting the task waiting and
// returning the snooze), and one waiting for CI whose job died while it
// asked the forge how CI stood. Either job stays "running" where no wake
// reaches it until River rescues it an hour later. The approval's task is
// requeued (its run finds the pending approval and parks again); the CI
// wait's gets a new job in the same state, which looks at CI again.
func (h *HandOver) recoverParked(ctx context.Context, owned func(owner string) bool) error {
	st := h.cfg.Store
	var waiting []store.Task
	for cursor := ""; ; {
		page, err := st.ListTasks(ctx, store.TaskFilter{States: []store.State{store.StateWaitingApproval, store.StateWaitingCI}, Cursor: cursor, Limit: 500})
		if err != nil {
			return fmt.Errorf("runner: crash recovery: %w", err)
		}
		waiting = append(waiting, page.Tasks...)
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	for _, t := range waiting {
		if !owned(t.LeaseOwner) {
			continue
		}
		stuck, err := st.JobRunning(ctx, t.ID)
		if err != nil {
			return fmt.Errorf("runner: crash recovery: %w", err)
		}
		if !stuck {
			continue
		}
		if t.State == store.StateWaitingCI {
			err = st.RenewJob(ctx, t.ID, store.StateWaitingCI)
		} else {
			_, err = st.Requeue(ctx, t.ID, []store.State{store.StateWaitingApproval})
		}
		if err != nil && !errors.Is(err, store.ErrStateConflict) {
			return fmt.Errorf("runner: crash recovery: %w", err)
		}
		h.cfg.Log.Info("runner: gave a job back to a parked task whose job died", "task", t.ID, "state", t.State)
	}
	return nil
}

// Stale reports whether running task t's node stopped proving alive: no
// heartbeat (or, before the first, no update) for StaleAfter.
func (h *HandOver) Stale(t store.RunningTask) bool {
	last := t.HeartbeatAt
	if last.IsZero() {
		last = t.UpdatedAt
	}
	return h.cfg.Now().Sub(last) > h.cfg.StaleAfter
}

// StaleTask returns running task id and whether its node stopped proving
// alive; a task not running (or not readable) is not stale.
func (h *HandOver) StaleTask(ctx context.Context, id string) (store.RunningTask, bool) {
	running, err := h.cfg.Store.RunningTasks(ctx)
	if err != nil {
		return store.RunningTask{}, false
	}
	for _, t := range running {
		if t.ID == id {
			return t, h.Stale(t)
		}
	}
	return store.RunningTask{}, false
}
