package workspace

import (
	"context"
	"errors"
	"fmt"
)

// A task's worktree has a detached HEAD, in its private git directory: the
// task's own commits move that HEAD and nothing of the shared repository.
// The task branch (refs/heads/reasonix/<id>) is moved by the service
// alone, when it commits the task's changes at Finish or at a hand-over's
// checkpoint, after the task's objects were imported (objects.go) and
// every object the new head reaches was found in the shared store.
//
// Why: the sandbox may not write the shared refs at all then. Were the
// task branches' directory writable (so that the model's own `git commit`
// could move its branch), a task could move every other task's branch
// there too — git creates a ref as <name>.lock beside it and renames it,
// and neither Landlock nor a mount can grant one file of a directory
// without the rest. And while a task runs, its branch names only commits
// the shared store holds, so the owner's `git log reasonix/<id>` works
// throughout (it shows the task's commits from its last checkpoint on).

// errLeftBranch: the task's worktree is on some other branch (the task
// ran `git checkout <branch>`), whose ref the service does not move.
var errLeftBranch = errors.New("the worktree is on another branch")

// taskHead returns the commit the task's worktree is at: its detached
// HEAD, or — a worktree prepared before HEADs were detached — the task
// branch it has checked out. Any other branch is errLeftBranch.
func (m *Manager) taskHead(ctx context.Context, t *tree, branch string) (string, error) {
	ref, err := m.gitIn(ctx, t, nil, "symbolic-ref", "--quiet", "HEAD")
	switch {
	case err == nil && ref != "refs/heads/"+branch:
		return "", errLeftBranch
	case err != nil && exitCode(err) != 1:
		return "", err
	}
	return m.gitIn(ctx, t, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
}

// detachHead detaches a worktree that has the task branch checked out (one
// prepared before HEADs were detached) at the branch's commit, so the
// sandbox no longer needs the shared refs. A detached one is left alone.
func (m *Manager) detachHead(ctx context.Context, t *tree, branch string) error {
	head, err := m.taskHead(ctx, t, branch)
	if err != nil {
		return err
	}
	_, err = m.gitIn(ctx, t, nil, "update-ref", "--no-deref", "-m", "reasonix: detach from "+branch, "HEAD", head)
	return err
}

// publishHead moves the task branch to the commit the task's worktree is
// at. The task chose that commit (it may have reset or rebased), so before
// the branch names it, every object it reaches that the branch did not
// reach already must be in the shared store — the store the owner and
// every later task read; an object only the task's directory held, or one
// it never had, fails the move and leaves the branch as it was. The
// caller holds the lock and has imported the task's objects.
func (m *Manager) publishHead(ctx context.Context, t *tree, taskID, branch string) error {
	head, err := m.taskHead(ctx, t, branch)
	if err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	old, err := m.git(ctx, t.common, "rev-parse", "--verify", "--quiet", ref)
	if err != nil && exitCode(err) != 1 {
		return err
	}
	if old == head {
		return nil
	}
	// m.git has no alternate object directory: only the shared store counts.
	check := []string{"rev-list", "--objects", "--quiet", head}
	if old != "" {
		check = append(check, "--not", old)
	}
	if _, err := m.git(ctx, t.common, check...); err != nil {
		return fmt.Errorf("workspace: task %s's commit %s is not complete in the shared repository; branch %s left at %s: %w", taskID, head, branch, old, err)
	}
	// old as the expected value: the ref moves only from what was checked.
	_, err = m.git(ctx, t.common, "update-ref", "-m", "reasonix: task "+taskID, ref, head, old)
	return err
}
