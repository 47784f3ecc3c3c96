package runner

import (
	"context"
	"errors"
	"time"

	"reasonix/runner/store"
)

// errDrained is the cancellation cause of runs a stopping node hands over:
// their steps did not finish within the drain timeout.
var errDrained = errors.New("runner: the node stopped; the task continues on another node")

// maxAutoResumes bounds how often a task is handed over without a person:
// a task that takes its node down with it (memory, a runaway command) must
// not hop from node to node forever. Past it the task is interrupted and
// waits for `reasonix tasks resume`.
const maxAutoResumes = 5

// WorkspaceReleaser is the optional part of Workspaces that hands a task's
// directory over to another node: it checkpoints the changes on the task's
// branch where the next node finds them and gives the directory up. A
// Workspaces without it moves workspace tasks without their files; scratch
// directories travel through the store either way (moveScratch).
type WorkspaceReleaser interface {
	Release(ctx context.Context, w *Workdir, message string) error
}

// drain lets running steps finish until the drain timeout passes, or
// until a quarter of what is left of ctx when that comes first (the runs
// then still have time to hand themselves over), then cancels the runs
// still going with errDrained. It returns early when done is closed.
func (s *Service) drain(ctx context.Context, done <-chan struct{}) {
	d := s.cfg.DrainTimeout
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
	s.cancelRuns(errDrained)
}

// release hands a run that the drain cut short to the queue again: its
// workspace is checkpointed on the task branch and given up, then the task
// is requeued, so whichever node claims it next rebuilds the session from
// the store (transcript and tool journal) and continues from its last
// completed step. Nobody has to resume it.
func (s *Service) release(ctx context.Context, r *run, ws *Workdir, reason string) error {
	id := r.task.ID
	if isScratch(ws) {
		s.moveScratch(ctx, id, ws)
	} else if ws != nil {
		if rel, ok := s.cfg.Workspaces.(WorkspaceReleaser); ok {
			if err := rel.Release(ctx, ws, "reasonix: checkpoint of task "+id+" (moved from node "+s.node+")"); err != nil {
				// Without the checkpoint the next node would continue
				// without these changes: better to wait for a person.
				ref := newRef()
				s.log.Error("runner: checkpointing the workspace", "task", id, "ref", ref, "err", err)
				if what, ok := tampered(err); ok {
					return s.finish(ctx, r, nil, tamperedOutcome(what, ref), s.now())
				}
				return s.finish(ctx, r, ws, outcome{state: store.StateInterrupted, code: "interrupted",
					reason: "the service stopped and the workspace could not be checkpointed (ref " + ref + ")"}, s.now())
			}
			s.checkpointed(ctx, r)
		}
	}
	return s.requeueRunning(ctx, id, reason)
}

// requeueRunning puts a running task of this node whose run a drain cut
// short back in the queue (see handOver).
func (s *Service) requeueRunning(ctx context.Context, id, reason string) error {
	return s.handOver(ctx, id, reason, func(evs []store.EventInput) (store.Task, error) {
		return s.st.Requeue(ctx, id, []store.State{store.StateRunning}, evs...)
	})
}

// takeOverStale puts a dead node's running task back in the queue, only
// while its heartbeat is still older than StaleAfter (store.RequeueStale):
// every node looks for such tasks, so the leader dying with them does not
// delay the take-over until River elects another, and a task is still
// taken over once.
func (s *Service) takeOverStale(ctx context.Context, t store.RunningTask) error {
	return s.handOver(ctx, t.ID, "the node running this task stopped responding", func(evs []store.EventInput) (store.Task, error) {
		return s.st.RequeueStale(ctx, t.ID, t.LeaseOwner, s.now().Add(-s.cfg.StaleAfter), evs...)
	})
}

// handOver queues a running task whose run ended without an outcome
// (drained, or its node died) again with requeue, unless it was handed
// over maxAutoResumes times already: then it is interrupted. requeue
// writes the hand-over's events with the change, so the next node's
// events come after them.
func (s *Service) handOver(ctx context.Context, id, reason string, requeue func([]store.EventInput) (store.Task, error)) error {
	t, err := s.st.Task(ctx, id)
	if err != nil {
		return s.lostState(ctx, id, err)
	}
	if t.Attempt >= maxAutoResumes {
		s.interruptStale(ctx, id, reason+"; it was handed over too often to continue on its own")
		return nil
	}
	_, err = requeue(s.announce(id, event{"task_released", map[string]any{"node": s.node, "reason": reason, "attempt": t.Attempt}},
		event{"task_state", map[string]any{"state": store.StateQueued, "reason": "released"}}))
	if err != nil {
		return s.lostState(ctx, id, err)
	}
	s.hub.notify(id)
	s.log.Info("runner: task handed over", "task", id, "reason", reason)
	return nil
}
