package runner

import (
	"context"
	"errors"

	"reasonix/agent"
	"reasonix/runner/internal/cluster"
	"reasonix/runner/internal/taskrun"
	"reasonix/runner/store"
)

// The service's side of the hand-over of tasks between nodes: what needs
// a run, a workspace or the service's books (the spend, the metrics)
// stays here; the rest is package cluster's (see nodeLife).

// defaultScratchMoveLimit bounds a packed scratch directory.
const defaultScratchMoveLimit = cluster.DefaultScratchMoveLimit

// WorkspaceReleaser is the optional part of Workspaces that hands a task's
// directory over to another node: it checkpoints the changes on the task's
// branch where the next node finds them and gives the directory up. A
// Workspaces without it moves workspace tasks without their files; scratch
// directories travel through the store either way (moveScratch).
type WorkspaceReleaser interface {
	Release(ctx context.Context, w *Workdir, message string) error
}

// drain lets running steps finish until the drain timeout passes (see
// cluster.Drain), then cancels the runs still going with cluster.ErrDrained. It
// returns early when done is closed.
func (s *Service) drain(ctx context.Context, done <-chan struct{}) {
	cluster.Drain(ctx, s.cfg.DrainTimeout, done, func() { s.cancelRuns(cluster.ErrDrained) })
}

// release hands a run that the drain cut short to the queue again: its
// workspace is checkpointed on the task branch and given up, then the task
// is requeued, so whichever node claims it next rebuilds the session from
// the store (transcript and tool journal) and continues from its last
// completed step. Nobody has to resume it.
func (s *Service) release(ctx context.Context, r *taskrun.Run, ws *Workdir, reason string) error {
	id := r.Task().ID
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
	return s.life.hand.Requeue(ctx, id, reason)
}

// takeOverStale puts a dead node's running task back in the queue (see
// cluster.HandOver.TakeOverStale).
func (s *Service) takeOverStale(ctx context.Context, t store.RunningTask) error {
	return s.life.hand.TakeOverStale(ctx, t)
}

// staleTask returns running task id when its node stopped proving alive.
func (s *Service) staleTask(ctx context.Context, id string) (store.RunningTask, bool) {
	return s.life.hand.StaleTask(ctx, id)
}

// interruptStale moves a running task whose run is gone to interrupted,
// with an event saying why; Resume continues it.
func (s *Service) interruptStale(ctx context.Context, id, reason string) {
	var prev *store.Result
	if cur, err := s.st.Task(ctx, id); err == nil {
		prev = cur.Result
	}
	res := s.keptSpend(ctx, id, prev) // the dead run's calls count too
	res.Error = "interrupted"
	t, err := s.st.SetTaskState(ctx, id, []store.State{store.StateRunning}, store.StateInterrupted, &store.StateOpts{Result: &res,
		Events: s.announce(id, event{"task_interrupted", map[string]any{"reason": reason}},
			event{"task_state", map[string]any{"state": store.StateInterrupted}})})
	if err != nil {
		if !errors.Is(err, store.ErrStateConflict) {
			s.log.Error("runner: mark interrupted", "task", id, "err", err)
		}
		return
	}
	s.hub.Notify(id)
	s.log.Warn("runner: task interrupted", "task", id, "reason", reason)
	s.metrics.finished.WithLabelValues(string(store.StateInterrupted), string(t.Source)).Inc()
}

// isScratch reports whether w is a scratch directory (no workspace).
func isScratch(w *Workdir) bool { return w != nil && w.Spec == "" && w.Branch == "" }

// moveScratch packs the scratch directory of a task being handed over into
// the store (see cluster.Scratch.Move).
func (s *Service) moveScratch(ctx context.Context, id string, w *Workdir) {
	s.life.scratch.Move(ctx, id, w.Dir)
}

// restoreScratch unpacks the scratch archive another node left for task
// into w (see cluster.Scratch.Restore).
func (s *Service) restoreScratch(ctx context.Context, task store.Task, w *Workdir) {
	if isScratch(w) {
		s.life.scratch.Restore(ctx, task, w.Dir)
	}
}

// awaitScratch runs before this node claims task: a snooze while the node
// holding its scratch directory has not handed it over (see
// cluster.Scratch.Await).
func (s *Service) awaitScratch(ctx context.Context, task store.Task) error {
	return s.life.scratch.Await(ctx, task)
}

// checkpointed records that the effects of every call run r's task
// journaled so far are in the commit just made on its branch (Release or
// Finish). While the run's note about lost changes has not reached the
// conversation (the run was cut first), nothing is marked: the calls it
// names are still missing and the next continuation must hear of them.
// A failure, like that case, only costs precision: a later continuation in
// a fresh worktree names calls as lost although the branch holds them.
func (s *Service) checkpointed(ctx context.Context, r *taskrun.Run) {
	if !s.checkpointNow(r) {
		return
	}
	if err := s.st.MarkCheckpointed(ctx, r.Task().ID); err != nil {
		s.log.Warn("runner: record the workspace checkpoint", "task", r.Task().ID, "err", err)
	}
}

// checkpointNow reports whether run r's journaled calls are to be
// marked checkpointed now (see checkpointed), logging when they are not.
func (s *Service) checkpointNow(r *taskrun.Run) bool {
	if r.LostNoteUntold() {
		s.log.Info("runner: checkpoint not recorded: the note on lost changes was not delivered", "task", r.Task().ID)
		return false
	}
	return true
}

// lostChanges tells the continuation of a task the truth about its
// workspace. A worktree made anew (ws.Fresh: another node continues the
// task, or its old worktree was broken) holds the task branch as last
// checkpointed; what the calls journaled since then changed died with the
// worktree they ran in — a node killed with kill -9 commits nothing. The
// transcript still says those calls succeeded, so the model is told which
// calls' effects are missing (cluster.LostNote) and redoes what it still
// needs. Read-only calls changed nothing and are not named. It returns ""
// when nothing is lost.
func (s *Service) lostChanges(ctx context.Context, r *taskrun.Run, ws *Workdir, tools *agent.ToolRegistry) (string, error) {
	if ws == nil || !ws.Fresh || ws.Branch == "" {
		return "", nil
	}
	entries, err := s.st.UncheckpointedCalls(ctx, r.Task().ID)
	if err != nil {
		return "", err
	}
	// A tool this run does not have (a sub-agent's, a plugin since
	// removed) counts as a writer.
	lost := cluster.LostCalls(entries, func(name string) bool {
		t, ok := tools.Get(name)
		return ok && agent.IsReadOnly(t)
	})
	if len(lost) == 0 {
		return "", nil
	}
	s.emitLogged(ctx, r.Task().ID, "workspace_changes_lost", map[string]any{"node": s.node, "branch": ws.Branch,
		"calls": len(lost), "lost": lost[:min(len(lost), cluster.MaxLostListed)]})
	s.log.Warn("runner: the workspace lacks changes of earlier calls", "task", r.Task().ID, "calls", len(lost))
	return s.redact.String(cluster.LostNote(ws.Branch, lost)), nil
}
