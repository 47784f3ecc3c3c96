package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
)

// Release hands a task's worktree over to whichever node continues the
// task: every change is committed on the task branch as a checkpoint (with
// message), the branch is pushed to the remote when the workspace is a URL
// (the only place another machine can reach), and the worktree is removed
// even under Config.Keep, so the next Prepare — on this node or another one
// sharing the repository — checks the branch out afresh. A scratch
// directory has nothing to hand over: it stays where it is.
//
// Prepare picks the checkpoint up: a local repository's branch is there
// already; for a URL the remote's task branch is fetched and used when the
// local one is missing or behind it.
func (m *Manager) Release(ctx context.Context, ws *Workspace, message string) error {
	if ws == nil {
		return fmt.Errorf("%w: nil workspace", ErrInvalid)
	}
	if ws.Branch == "" {
		return nil
	}
	taskID, rec, err := m.locate(ws)
	if err != nil {
		return err
	}
	// The checkpoint commit is the task's own (commit takes the lock for
	// the objects it imports); the push and the worktree's removal are
	// the repository's.
	if _, err := os.Lstat(ws.Dir); err == nil {
		if err := m.commit(ctx, ws, taskID, rec, cmp.Or(message, "reasonix: checkpoint of task "+taskID)); err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("workspace: inspect worktree: %w", err)
	}
	unlock, err := m.lock(ctx, rec.GitDir)
	if err != nil {
		return err
	}
	defer unlock()
	if rec.GitDir == m.cloneDir(rec.Spec) {
		ref := "refs/heads/" + ws.Branch
		if _, err := m.gitNet(ctx, rec.GitDir, "push", "--quiet", "--no-verify", "origin", ref+":"+ref); err != nil {
			return fmt.Errorf("workspace: push the checkpoint of task %s to %s: %w", taskID, rec.Repo, err)
		}
	}
	if err := m.dropWorktree(ctx, ws.Dir, rec.GitDir); err != nil {
		return err
	}
	m.log.Info("workspace: released", "task", taskID, "branch", ws.Branch)
	return nil
}

// adoptRemoteBranch points the clone's task branch at the remote's, when
// another node pushed a checkpoint there that the local branch lacks (it is
// missing or an ancestor of the remote one). A branch that diverged stays
// as it is. The caller holds the lock and has just fetched.
func (m *Manager) adoptRemoteBranch(ctx context.Context, gitDir, branch string) error {
	remote, err := m.git(ctx, gitDir, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+branch)
	if err != nil {
		if exitCode(err) == 1 {
			return nil // nobody pushed one
		}
		return err
	}
	local, err := m.git(ctx, gitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	switch {
	case err != nil && exitCode(err) != 1:
		return err
	case err == nil && local == remote:
		return nil
	case err == nil:
		if _, err := m.git(ctx, gitDir, "merge-base", "--is-ancestor", local, remote); err != nil {
			if exitCode(err) == 1 {
				return nil // diverged: keep ours
			}
			return err
		}
	}
	_, err = m.git(ctx, gitDir, "update-ref", "refs/heads/"+branch, remote)
	return err
}
