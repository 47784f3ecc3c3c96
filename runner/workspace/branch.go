package workspace

import (
	"context"
	"fmt"
	"io"
)

// GitDir returns the repository holding task taskID's branch: the
// workspace's own repository, or the Manager's clone of a URL. It reads the
// task's record, so it works after the worktree is gone and after a
// restart, on the node that prepared the task.
func (m *Manager) GitDir(taskID string) (string, error) {
	rec, err := m.taskRecord(taskID)
	if err != nil {
		return "", err
	}
	return rec.GitDir, nil
}

// Diff writes the task branch's changes against the commit it started from
// (`git diff <base>...<branch>`, no colour, no external diff or textconv)
// to w.
func (m *Manager) Diff(ctx context.Context, taskID string, w io.Writer) error {
	rec, err := m.taskRecord(taskID)
	if err != nil {
		return err
	}
	return m.runTo(ctx, m.gitEnv, local, rec.GitDir, nil, w,
		[]string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", rec.Base + "..." + "refs/heads/" + branchPrefix + taskID})
}

func (m *Manager) taskRecord(taskID string) (*record, error) {
	if err := validTaskID(taskID); err != nil {
		return nil, err
	}
	rec, err := m.readRecord(taskID)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("%w: task %s (was it prepared under %s?)", ErrNoRecord, taskID, m.root)
	}
	return rec, nil
}
