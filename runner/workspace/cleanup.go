package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Remove deletes the task's worktree or scratch dir (and prunes git's worktree metadata); the branch
// stays, and so does the Manager's record of the task's base, so a later Prepare for the task
// continues its branch. Removing what is already gone is not an error.
func (m *Manager) Remove(ctx context.Context, ws *Workspace) error {
	if ws == nil {
		return fmt.Errorf("%w: nil workspace", ErrInvalid)
	}
	if ws.Branch == "" {
		dir, err := m.scratchOf(ws)
		if err != nil {
			return err
		}
		return m.removeTree(dir)
	}
	taskID, rec, err := m.locate(ws)
	if err != nil {
		return err
	}
	return m.removeWorktree(ctx, taskID, rec.GitDir)
}

// removeWorktree takes the repository's lock and deletes the task's
// worktree.
func (m *Manager) removeWorktree(ctx context.Context, taskID, gitDir string) error {
	unlock, err := m.lock(ctx, gitDir)
	if err != nil {
		return err
	}
	defer unlock()
	return m.dropWorktree(ctx, m.worktreeDir(taskID), gitDir)
}

// locate checks that ws is a worktree under this root and returns its task
// and record.
func (m *Manager) locate(ws *Workspace) (string, *record, error) {
	taskID, err := taskFromBranch(ws.Branch)
	if err != nil {
		return "", nil, err
	}
	if ws.Dir != m.worktreeDir(taskID) {
		return "", nil, fmt.Errorf("%w: %s is not task %s's worktree under %s", ErrInvalid, ws.Dir, taskID, m.root)
	}
	rec, err := m.readRecord(taskID)
	if err != nil {
		return "", nil, err
	}
	if rec == nil {
		return "", nil, fmt.Errorf("%w: task %s (was it prepared under %s?)", ErrNoRecord, taskID, m.root)
	}
	return taskID, rec, nil
}

// scratchOf checks that ws is a scratch directory under this root.
func (m *Manager) scratchOf(ws *Workspace) (string, error) {
	id := filepath.Base(ws.Dir)
	if validTaskID(id) != nil || ws.Dir != m.scratchDir(id) {
		return "", fmt.Errorf("%w: %s is not a scratch directory under %s", ErrInvalid, ws.Dir, m.root)
	}
	return ws.Dir, nil
}

// removeTree deletes path, which must lie inside the root. Read-only
// directories (a Go module cache, say) are made writable and the removal
// retried.
func (m *Manager) removeTree(path string) error {
	if !m.within(path) {
		return fmt.Errorf("workspace: refusing to remove %s: outside %s", path, m.root)
	}
	if err := os.RemoveAll(path); err == nil {
		return nil
	}
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("workspace: remove %s: %w", path, err)
	}
	return nil
}

// samePath reports whether a and b name the same directory once symlinks
// are resolved.
func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return errors.Join(err1, err2) == nil && ra == rb
}

// cut2 splits two-line command output.
func cut2(s string) (first, second string, ok bool) {
	return strings.Cut(s, "\n")
}
