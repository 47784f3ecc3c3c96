package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"reasonix/runner/store"
)

// A scratch task that stops without being handed over (it finished, was
// interrupted, or waits for an approval) keeps its directory on the node
// that ran it. When another node is to run it next (a reply continues it,
// a resume, a decided approval), that node asks the holder for the
// directory through the store and waits: the holder packs it into the
// store as a drain does (moveScratch), answers, and wakes the task's job,
// and the next run unpacks it (restoreScratch). A holder that is not
// running is not waited for, nor one silent for Config.ScratchWait: the
// task then continues without the files, and its events say so.

// awaitScratch runs before this node claims task. It returns a snooze
// while the node holding the task's scratch directory, alive, has not
// answered the request for it, and nil to go ahead.
func (s *Service) awaitScratch(ctx context.Context, task store.Task) error {
	owner := task.LeaseOwner
	if task.Workspace != "" || task.Attempt == 0 || owner == "" {
		return nil // never ran: there is no directory yet
	}
	if owner == s.node {
		// The directory is here, or in an archive this node left: an
		// answer recorded for an earlier move is stale from now on.
		s.dropScratchRequest(ctx, task.ID)
		return nil
	}
	if _, err := s.st.Scratch(ctx, task.ID); err == nil {
		return nil // handed over already: restoreScratch takes it
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("runner: look for a scratch archive: %w", err)
	}
	req, err := s.st.ScratchRequestOf(ctx, task.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("runner: read a scratch request: %w", err)
	}
	if err == nil && req.Node == owner && !req.AnsweredAt.IsZero() {
		// Answered (the holder's events say how): nothing more will come.
		s.dropScratchRequest(ctx, task.ID)
		return nil
	}
	if gone := s.nodeGone(ctx, owner); gone != "" {
		s.dropScratchRequest(ctx, task.ID)
		s.emitLogged(ctx, task.ID, "scratch_not_moved", map[string]any{"node": owner,
			"reason": "node " + owner + " " + gone + " with the task's scratch directory; the task continues without those files"})
		return nil
	}
	if err == nil && req.Node != owner {
		s.dropScratchRequest(ctx, task.ID) // asked of a node that held it before
	}
	if req, err = s.st.RequestScratch(ctx, task.ID, owner); err != nil {
		return fmt.Errorf("runner: ask for a scratch directory: %w", err)
	}
	if !req.AnsweredAt.IsZero() {
		s.dropScratchRequest(ctx, task.ID)
		return nil
	}
	if waited := s.now().Sub(req.RequestedAt); waited < s.cfg.ScratchWait {
		return store.Snooze(s.cfg.ScratchWait - waited) // the holder's answer wakes the job
	}
	s.dropScratchRequest(ctx, task.ID)
	s.emitLogged(ctx, task.ID, "scratch_not_moved", map[string]any{"node": owner,
		"reason": fmt.Sprintf("node %s did not hand over the task's scratch directory within %s; the task continues without those files", owner, s.cfg.ScratchWait)})
	return nil
}

// nodeGone says why node cannot hand anything over ("stopped", "stopped
// responding"), or "" while it runs (or drains) with a fresh heartbeat.
// Not knowing counts as running: the wait is bounded, going on without
// the files cannot be undone.
func (s *Service) nodeGone(ctx context.Context, node string) string {
	nodes, err := s.Nodes(ctx)
	if err != nil {
		return ""
	}
	for _, n := range nodes {
		switch {
		case n.ID != node:
		case n.State == store.NodeStopped:
			return "stopped"
		case n.Stale:
			return "stopped responding"
		default:
			return ""
		}
	}
	return "stopped responding" // its row is gone, or it never had one
}

func (s *Service) dropScratchRequest(ctx context.Context, id string) {
	if err := s.st.DropScratchRequest(context.WithoutCancel(ctx), id); err != nil {
		s.log.Warn("runner: dropping a scratch request", "task", id, "err", err)
	}
}

// answerScratchRequests hands over the scratch directories other nodes
// asked this node for, every ControlInterval while the node lives.
func (s *Service) answerScratchRequests(ctx context.Context) {
	t := time.NewTicker(s.cfg.ControlInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids, err := s.st.ScratchRequests(ctx, s.node)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("runner: reading scratch requests", "err", err)
			}
			continue
		}
		for _, id := range ids {
			s.handOverScratch(ctx, id)
		}
	}
}

// handOverScratch packs task id's scratch directory into the store for the
// node that asked for it, unless the task runs (here or elsewhere) or
// ended meanwhile, then answers and wakes the task's job.
func (s *Service) handOverScratch(ctx context.Context, id string) {
	s.scratchMu.Lock()
	defer s.scratchMu.Unlock()
	t, err := s.st.Task(ctx, id)
	if err != nil {
		s.log.Warn("runner: reading a task whose scratch directory was asked for", "task", id, "err", err)
		return
	}
	waiting := t.State == store.StateQueued || t.State == store.StateWaitingApproval
	if waiting && t.LeaseOwner == s.node && s.runFor(id) == nil {
		finder, ok := s.cfg.Workspaces.(ScratchFinder)
		dir := ""
		if ok {
			dir = finder.ScratchDir(id)
		}
		if fi, err := os.Stat(dir); dir != "" && err == nil && fi.IsDir() {
			s.moveScratch(ctx, id, &Workdir{Dir: dir})
		} else {
			s.emitLogged(ctx, id, "scratch_not_moved", map[string]any{"node": s.node,
				"reason": "node " + s.node + " no longer has the task's scratch directory; the task continues without it"})
		}
	}
	if err := s.st.AnswerScratchRequest(ctx, id, s.node); err != nil {
		s.log.Warn("runner: answering a scratch request", "task", id, "err", err)
		return
	}
	if err := s.st.Wake(ctx, id); err != nil {
		s.log.Warn("runner: waking a task after handing over its scratch directory", "task", id, "err", err)
	}
}
