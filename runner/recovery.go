package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"reasonix/internal/ids"
	"reasonix/runner/store"
)

// nodeIDFile holds a node's id inside the data directory.
const nodeIDFile = "node-id"

// NodeID returns this machine's node id, kept in <dataDir>/node-id and
// created (0600) on first use, so a restarted service recognises the tasks
// it was running when it died.
func NodeID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, nodeIDFile)
	if b, err := os.ReadFile(path); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("runner: read node id: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("runner: node id: %w", err)
	}
	id := "node-" + ids.Hex(8)
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("runner: write node id: %w", err)
	}
	return id, nil
}

// recoverCrashed marks interrupted every running task that this node owned
// (it died running them; the process groups their tool calls left behind
// are killed first) and queues again those whose node stopped sending
// heartbeats.
func (s *Service) recoverCrashed(ctx context.Context) error {
	running, err := s.st.RunningTasks(ctx)
	if err != nil {
		return fmt.Errorf("runner: crash recovery: %w", err)
	}
	for _, t := range running {
		if t.LeaseOwner != s.node && !s.staleSince(t) {
			continue
		}
		if t.LeaseOwner != s.node {
			// Another node died running it: take it over.
			if err := s.takeOverStale(ctx, t); err != nil {
				return fmt.Errorf("runner: crash recovery: %w", err)
			}
			continue
		}
		// This node died running it. The crash may have been the task's
		// own doing, so a person decides whether it runs again. Another
		// node's process numbers mean nothing here: only ours are killed.
		s.killOrphans(ctx, t.ID)
		s.interruptStale(ctx, t.ID, "the service stopped while this task ran")
	}
	return s.recoverParked(ctx)
}

// recoverParked requeues the tasks this node parked on an approval whose
// job never recorded its snooze: the process died between setting the task
// waiting and returning the snooze, leaving the job "running" where no wake
// reaches it. The requeued run finds the pending approval and parks again.
func (s *Service) recoverParked(ctx context.Context) error {
	var waiting []store.Task
	for cursor := ""; ; {
		page, err := s.st.ListTasks(ctx, store.TaskFilter{States: []store.State{store.StateWaitingApproval}, Cursor: cursor, Limit: 500})
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
		if t.LeaseOwner != s.node {
			continue
		}
		stuck, err := s.st.JobRunning(ctx, t.ID)
		if err != nil {
			return fmt.Errorf("runner: crash recovery: %w", err)
		}
		if !stuck {
			continue
		}
		if _, err := s.st.Requeue(ctx, t.ID, []store.State{store.StateWaitingApproval}); err != nil && !errors.Is(err, store.ErrStateConflict) {
			return fmt.Errorf("runner: crash recovery: %w", err)
		}
		s.log.Info("runner: requeued a parked task whose job died", "task", t.ID)
	}
	return nil
}

func (s *Service) staleSince(t store.RunningTask) bool {
	last := t.HeartbeatAt
	if last.IsZero() {
		last = t.UpdatedAt
	}
	return s.now().Sub(last) > s.cfg.StaleAfter
}

// staleTask returns running task id when its node stopped proving alive.
func (s *Service) staleTask(ctx context.Context, id string) (store.RunningTask, bool) {
	running, err := s.st.RunningTasks(ctx)
	if err != nil {
		return store.RunningTask{}, false
	}
	for _, t := range running {
		if t.ID == id {
			return t, s.staleSince(t)
		}
	}
	return store.RunningTask{}, false
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
	s.hub.notify(id)
	s.log.Warn("runner: task interrupted", "task", id, "reason", reason)
	s.metrics.finished.WithLabelValues(string(store.StateInterrupted), string(t.Source)).Inc()
}
