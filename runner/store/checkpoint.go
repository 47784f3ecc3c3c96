package store

import (
	"context"
	"fmt"
)

// MarkCheckpointed records that the effects of every call the task has
// journaled so far are in a checkpoint of its workspace: call it after the
// commit on the task's branch (workspace Release or Finish) succeeded, when
// no call of the task runs. Calls journaled later stay unmarked until the
// next checkpoint.
// (StateOpts.Checkpoint does it with a state change.)
func (s *Store) MarkCheckpointed(ctx context.Context, taskID string) error {
	return markCheckpointed(ctx, s.db, taskID)
}

const markCheckpointedSQL = `UPDATE tool_journal SET checkpointed = 1 WHERE task_id = ? AND checkpointed = 0`

func markCheckpointed(ctx context.Context, q querier, taskID string) error {
	if _, err := q.exec(ctx, markCheckpointedSQL, taskID); err != nil {
		return fmt.Errorf("store: mark checkpoint of %s: %w", taskID, err)
	}
	return nil
}

// UncheckpointedCalls lists, in start order, the task's journaled calls
// whose effects no checkpoint holds: after the workspace was restored from
// its last checkpoint, whatever they changed is gone.
func (s *Store) UncheckpointedCalls(ctx context.Context, taskID string) ([]JournalEntry, error) {
	return s.journal(ctx, taskID, "AND checkpointed = 0")
}
