package runner

import (
	"context"
	"slices"

	"reasonix/runner/store"
)

// A task whose workspace already runs max_parallel tasks parks its job
// (store.ErrWorkspaceBusy) and holds no worker. When a task of that
// workspace stops running here — it ended, parked for an approval or CI,
// or failed — the node wakes the workspace's oldest queued tasks, so a
// freed slot is taken at once instead of after the parked job's snooze.
// The snooze (Config.SlotRetry) stays as the fallback for a slot freed where
// no wake is sent: a node that died, a task cancelled elsewhere.

// slotWakes is how many queued tasks of a workspace one freed slot wakes.
// One would do when every woken task claims; two cover a woken task that
// finds the slot taken by a new submission, and the wake is cheap for a
// task whose job was not parked (it changes nothing).
const slotWakes = 2

// wakeWorkspaceWaiters wakes up to slotWakes of workspace's oldest queued
// tasks other than the one that just stopped running. Errors are logged:
// the snooze still wakes them.
func (s *Service) wakeWorkspaceWaiters(ctx context.Context, workspace, stopped string) {
	if workspace == "" {
		return // a scratch task has no slot to free
	}
	ctx = context.WithoutCancel(ctx)
	page, err := s.st.ListTasks(ctx, store.TaskFilter{States: []store.State{store.StateQueued}, Workspace: workspace, Limit: 100})
	if err != nil {
		s.log.Warn("runner: list the tasks waiting for a workspace slot", "workspace", workspace, "err", err)
		return
	}
	queued := slices.DeleteFunc(page.Tasks, func(t store.Task) bool { return t.ID == stopped })
	// The page is newest first; the longest waiting go first.
	woken := 0
	for i := len(queued) - 1; i >= 0 && woken < slotWakes; i-- {
		if err := s.st.Wake(ctx, queued[i].ID); err != nil {
			s.log.Warn("runner: wake a task waiting for a workspace slot", "task", queued[i].ID, "err", err)
			continue
		}
		woken++
	}
}
