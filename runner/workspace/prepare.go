package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Workspace is a task's prepared directory. Its fields are all Finish and
// Remove need, so a caller may persist them and rebuild the value after a
// restart.
type Workspace struct {
	Dir    string // absolute, symlink-free
	Branch string // "reasonix/<task-id>"; "" for a scratch directory
	Base   string // the commit the branch started from; "" for scratch
	Spec   string // the workspace name; "" for scratch
	// Fresh reports that Prepare made the worktree anew rather than
	// reopening one: it holds the task branch as last committed (or the
	// base), and whatever an earlier run of the task left uncommitted —
	// on a node that died, say — is not in it.
	Fresh bool
}

// Prepare creates (or, for a task resumed after a restart, reopens) the task's workspace:
// with spec == nil a scratch directory <Root>/scratch/<taskID>; otherwise a git worktree of
// spec.Repo on a new branch reasonix/<taskID> from spec.Base under <Root>/worktrees/<taskID>.
// A git URL is cloned once (bare) into <Root>/repos/<name> and fetched before each task.
// Setup commands run in the new worktree (not again when reopening); a failing one is a
// *SetupError quoting the command and the tail of its output.
//
// The worktree's HEAD is detached at the task branch's commit: the task's
// own commits move only that HEAD, and the service moves the branch when it
// finishes or hands the task over (taskref.go).
//
// Reopening: a worktree whose setup completed and that is still a healthy
// worktree (detached, or on the task branch) is returned as it is,
// uncommitted changes included. A broken one (setup interrupted, git
// metadata gone, another branch checked out) is deleted and made again.
// When the task branch already exists (a finished task being continued),
// the new worktree starts at its commit instead of the base, and Base stays
// the commit the task first started from.
//
// The taskID must match [A-Za-z0-9_-]+ (else ErrInvalid); a missing base is
// ErrBaseNotFound. Prepare is safe to call concurrently for different tasks;
// the caller runs at most one Prepare, Finish or Remove per task at a time.
// Submodules are not initialized: add `git submodule update --init` to setup.
func (m *Manager) Prepare(ctx context.Context, taskID string, spec *Spec) (*Workspace, error) {
	if err := validTaskID(taskID); err != nil {
		return nil, err
	}
	if spec == nil {
		return m.prepareScratch(taskID)
	}
	s, err := spec.normalize()
	if err != nil {
		return nil, err
	}
	gitDir, err := m.gitDirOf(ctx, s)
	if err != nil {
		return nil, err
	}
	ws, rec, err := m.checkout(ctx, taskID, s, gitDir)
	if err != nil || rec == nil {
		return ws, err
	}
	if err := m.setup(ctx, s, ws.Dir, taskID); err != nil {
		if !m.keep {
			if rerr := m.removeWorktree(context.WithoutCancel(ctx), taskID, gitDir); rerr != nil {
				m.log.Warn("workspace: cleaning up after failed setup", "task", taskID, "err", rerr)
			}
		}
		return nil, err
	}
	rec.SetupDone = true
	if err := m.writeRecord(rec); err != nil {
		return nil, err
	}
	m.log.Info("workspace: prepared", "task", taskID, "workspace", s.Name, "dir", ws.Dir, "base", ws.Base)
	return ws, nil
}

// prepareScratch makes (or reopens) an empty directory for a task without a
// workspace.
func (m *Manager) prepareScratch(taskID string) (*Workspace, error) {
	dir := m.scratchDir(taskID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: scratch directory: %w", err)
	}
	return &Workspace{Dir: dir}, nil
}

// checkout does the git part of Prepare: it reopens a healthy worktree
// (fresh == nil), or syncs a clone, cleans a broken worktree and adds a new
// one (fresh is its record, written with SetupDone false so a crash during
// setup marks it broken). A worktree whose git links the task changed is
// not reopened: that is a *TamperedError. Only the steps on the
// repository's shared state hold its lock (the fetch, removing and adding
// the worktree); reading refs and filling the new worktree do not, so
// tasks of one repository start side by side.
func (m *Manager) checkout(ctx context.Context, taskID string, s Spec, gitDir string) (ws *Workspace, fresh *record, err error) {
	rec, err := m.readRecord(taskID)
	if err != nil {
		return nil, nil, err
	}
	if rec != nil && (rec.Spec != s.Name || rec.GitDir != gitDir) {
		return nil, nil, fmt.Errorf("%w: task %s already has a worktree of workspace %q (%s); a task keeps its workspace",
			ErrInvalid, taskID, rec.Spec, rec.Repo)
	}
	dir, branch := m.worktreeDir(taskID), BranchFor(taskID)
	if rec != nil && rec.SetupDone {
		healthy, err := m.healthy(ctx, taskID, rec, branch)
		if err != nil {
			return nil, nil, err
		}
		if healthy {
			// A worktree prepared before tasks had object directories
			// gets one: the sandbox no longer grants the shared store.
			admin := taskID
			if rec.Layout != nil {
				admin = rec.Layout.Admin
			}
			if err := ensureObjectDir(filepath.Join(gitDir, "worktrees", admin)); err != nil {
				return nil, nil, err
			}
			m.log.Info("workspace: reopened", "task", taskID, "workspace", s.Name, "dir", dir)
			return &Workspace{Dir: dir, Branch: branch, Base: rec.Base, Spec: s.Name}, nil, nil
		}
	}
	// Only a new worktree needs the remote's latest state: reopening works
	// while the remote is unreachable.
	if isURL(s.Repo) {
		if err := m.fetchBase(ctx, s, gitDir, branch); err != nil {
			return nil, nil, err
		}
	}
	if _, err := os.Lstat(dir); err == nil {
		m.log.Warn("workspace: recreating a broken worktree", "task", taskID, "dir", dir)
	}
	// A broken worktree's commits are imported before the branch is read.
	if m.leftovers(dir, gitDir) {
		if err := m.removeWorktree(ctx, taskID, gitDir); err != nil {
			return nil, nil, err
		}
	}

	base, err := m.startingPoint(ctx, s, gitDir, branch, rec)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, nil, fmt.Errorf("workspace: worktree directory: %w", err)
	}
	if err := m.addWorktree(ctx, dir, gitDir, taskID, branch, base); err != nil {
		return nil, nil, err
	}
	l, err := snapshot(dir, gitDir)
	if err != nil {
		return nil, nil, err
	}
	if err := ensureObjectDir(filepath.Join(gitDir, "worktrees", l.Admin)); err != nil {
		return nil, nil, err
	}
	// The files come from the branch's commit into the task's own index
	// and directory, outside the lock: on a large repository this is most
	// of a new worktree's time.
	t := &tree{dir: dir, private: filepath.Join(gitDir, "worktrees", l.Admin), common: gitDir}
	if _, err := m.gitIn(ctx, t, nil, "read-tree", "-u", "--reset", "HEAD"); err != nil {
		return nil, nil, err
	}
	fresh = &record{Task: taskID, Spec: s.Name, Repo: redact(s.Repo), GitDir: gitDir, Base: base.commit, Layout: l}
	if err := m.writeRecord(fresh); err != nil {
		return nil, nil, err
	}
	return &Workspace{Dir: dir, Branch: branch, Base: base.commit, Spec: s.Name, Fresh: true}, fresh, nil
}

// start is where a new worktree begins.
type start struct {
	commit       string // the task's base commit
	branchExists bool   // check the task branch out instead of creating it
}

// fetchBase syncs a clone with its remote and adopts the remote's task
// branch when another node pushed a checkpoint of it, under the lock.
func (m *Manager) fetchBase(ctx context.Context, s Spec, gitDir, branch string) error {
	unlock, err := m.lock(ctx, gitDir)
	if err != nil {
		return err
	}
	defer unlock()
	if err := m.syncClone(ctx, s, gitDir); err != nil {
		return err
	}
	return m.adoptRemoteBranch(ctx, gitDir, branch)
}

// leftovers reports whether a worktree of dir is there, or registered in
// the repository, to clean before a new one is added.
func (m *Manager) leftovers(dir, gitDir string) bool {
	for _, p := range []string{dir, filepath.Join(gitDir, "worktrees", filepath.Base(dir))} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			return true
		}
	}
	return false
}

// addWorktree registers dir as a worktree at the task's branch, without
// its files (checkout fills them in), under the repository's lock. Its
// HEAD is detached: the service moves the branch (taskref.go), the task
// never does. --force: a node that died running the task may still have
// the branch checked out in its worktree (before HEADs were detached); the
// task runs on one node at a time, so this one owns it. A registration
// left by a worktree that disappeared is pruned and the add tried again.
func (m *Manager) addWorktree(ctx context.Context, dir, gitDir, taskID, branch string, base start) error {
	unlock, err := m.lock(ctx, gitDir)
	if err != nil {
		return err
	}
	defer unlock()
	at := "refs/heads/" + branch
	if !base.branchExists {
		if _, err := m.git(ctx, gitDir, "update-ref", "-m", "reasonix: task "+taskID, at, base.commit, ""); err != nil {
			return err
		}
		at = base.commit
	}
	args := []string{"worktree", "add", "--quiet", "--no-checkout", "--force", "--detach", dir, at}
	if _, err = m.git(ctx, gitDir, args...); err == nil {
		return nil
	}
	if _, perr := m.git(ctx, gitDir, "worktree", "prune"); perr != nil {
		return err
	}
	_, err = m.git(ctx, gitDir, args...)
	return err
}

// startingPoint decides where a new worktree begins: a new branch at the
// resolved base, or the existing task branch (whose base is the recorded
// one, or its merge base with the configured base when the record is gone).
func (m *Manager) startingPoint(ctx context.Context, s Spec, gitDir, branch string, rec *record) (start, error) {
	_, err := m.git(ctx, gitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil && exitCode(err) != 1 {
		return start{}, err
	}
	exists := err == nil
	if exists && rec != nil && rec.Base != "" {
		return start{commit: rec.Base, branchExists: true}, nil
	}
	base, err := m.resolveBase(ctx, s, gitDir)
	if err != nil {
		return start{}, err
	}
	if !exists {
		return start{commit: base}, nil
	}
	mb, err := m.git(ctx, gitDir, "merge-base", base, "refs/heads/"+branch)
	if err != nil {
		return start{}, fmt.Errorf("workspace: branch %s shares no history with base %q: delete the branch or fix base: %w", branch, s.Base, err)
	}
	return start{commit: mb, branchExists: true}, nil
}

// healthy reports whether the task's worktree is there, linked to its
// repository as git linked it, at a commit and on no other branch. A
// worktree whose links changed is a *TamperedError, not "unhealthy": it
// is not silently replaced. Otherwise only ctx ending is an error.
func (m *Manager) healthy(ctx context.Context, taskID string, rec *record, branch string) (bool, error) {
	dir := m.worktreeDir(taskID)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false, nil
	}
	// A worktree without its link, or whose private directory was pruned
	// (nothing in the sandbox may remove that directory itself), is broken
	// rather than redirected: it is made again.
	if _, err := os.Lstat(filepath.Join(dir, ".git")); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if l := rec.Layout; l != nil {
		if _, err := os.Lstat(filepath.Join(rec.GitDir, "worktrees", filepath.Base(l.Admin))); errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
	}
	t, err := m.verify(taskID, rec)
	if err != nil {
		return false, err
	}
	// Detached (or, prepared before HEADs were detached, on the task
	// branch, which is detached now): the sandbox no longer grants the
	// shared refs, so an attached HEAD could not commit.
	if err := m.detachHead(ctx, t, branch); err != nil {
		return false, ctx.Err()
	}
	return true, nil
}

// dropWorktree removes whatever is at dir and the repository's metadata of
// worktrees whose directory is gone. The caller holds the lock.
func (m *Manager) dropWorktree(ctx context.Context, dir, gitDir string) error {
	// Objects the task committed and nobody imported yet (a worktree
	// removed without Finish) would go with its private directory.
	if err := m.importObjects(ctx, gitDir, filepath.Join(gitDir, "worktrees", filepath.Base(dir))); err != nil {
		m.log.Warn("workspace: importing a removed worktree's objects", "dir", dir, "err", err)
	}
	if _, err := os.Lstat(dir); err == nil {
		// Let git unregister it if it can; the directory goes either way.
		_, _ = m.git(ctx, gitDir, "worktree", "remove", "--force", "--force", dir)
		if err := m.removeTree(dir); err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("workspace: inspect worktree: %w", err)
	}
	_, err := m.git(ctx, gitDir, "worktree", "prune")
	return err
}
