package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Default commit identity, used for whatever the repository's own config
// does not set.
const (
	DefaultAuthorName  = "Reasonix"
	DefaultAuthorEmail = "reasonix@localhost"
)

// Result of finishing a task's workspace.
type Result struct {
	Branch   string // "" for scratch
	Commit   string // the branch head when the branch differs from Base (the commit made for the task's changes); "" when nothing changed
	DiffStat string // `git diff --stat <base>..<branch>` output, "" when nothing changed or scratch
	Changed  bool   // the task branch differs from Base
}

// Finish commits every change in the worktree (including new files; respecting .gitignore) on the
// task branch with message, computes the diff stat against Base, and removes the worktree unless
// Config.Keep (the branch stays in the repository; for a URL workspace that is the Manager's clone).
//
// The commit's author and committer are "Reasonix <reasonix@localhost>" unless the repository's own
// config (not the global one) sets user.name / user.email; the identity is passed per command, so it
// works on a machine with no git identity and writes no config. Commit hooks do not run: an
// unattended commit must not be blocked or rewritten by a hook. An empty message becomes
// "reasonix: task <id>".
//
// Changes the task committed itself count too: Changed, Commit and DiffStat describe the whole branch
// against Base, so a continued task reports everything it did. Finish is safe to repeat: when the
// worktree is already gone it reports the branch as it stands. A scratch directory has no result;
// it is removed unless Keep.
func (m *Manager) Finish(ctx context.Context, ws *Workspace, message string) (Result, error) {
	if ws == nil {
		return Result{}, fmt.Errorf("%w: nil workspace", ErrInvalid)
	}
	if ws.Branch == "" {
		dir, err := m.scratchOf(ws)
		if err != nil {
			return Result{}, err
		}
		if !m.keep {
			return Result{}, m.removeTree(dir)
		}
		return Result{}, nil
	}
	taskID, rec, err := m.locate(ws)
	if err != nil {
		return Result{}, err
	}
	// No repository lock here: the commit touches only the task's own
	// worktree, index, branch and object directory; the steps on what
	// tasks share (importing the objects, removing the worktree) take it
	// themselves, so tasks of one repository finish side by side.
	if _, err := os.Lstat(ws.Dir); err == nil {
		if err := m.commit(ctx, ws, taskID, rec, cmp.Or(message, "reasonix: task "+taskID)); err != nil {
			return Result{}, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return Result{}, fmt.Errorf("workspace: inspect worktree: %w", err)
	}

	res := Result{Branch: ws.Branch}
	base := cmp.Or(rec.Base, ws.Base)
	head, err := m.git(ctx, rec.GitDir, "rev-parse", "--verify", "refs/heads/"+ws.Branch)
	if err != nil {
		return Result{}, err
	}
	_, err = m.git(ctx, rec.GitDir, "diff", "--quiet", "--no-ext-diff", "--no-textconv", base, head)
	switch {
	case err == nil:
	case exitCode(err) == 1:
		res.Changed, res.Commit = true, head
		stat, err := m.git(ctx, rec.GitDir, "diff", "--stat", "--no-color", "--no-ext-diff", "--no-textconv", base+".."+head)
		if err != nil {
			return Result{}, err
		}
		res.DiffStat = stat
	default:
		return Result{}, err
	}
	if !m.keep {
		if err := m.removeWorktree(ctx, taskID, rec.GitDir); err != nil {
			return res, err
		}
	}
	m.log.Info("workspace: finished", "task", taskID, "branch", ws.Branch, "changed", res.Changed, "commit", res.Commit)
	return res, nil
}

// commit stages everything in the worktree and commits it on the task
// branch, unless nothing is staged, and moves the branch to it. The caller holds the lock. A worktree
// whose git links changed is refused (*TamperedError) before any git runs
// in it.
func (m *Manager) commit(ctx context.Context, ws *Workspace, taskID string, rec *record, message string) error {
	t, err := m.verify(taskID, rec)
	if err != nil {
		m.log.Error("workspace: refusing a tampered worktree", "task", taskID, "err", err)
		return err
	}
	if _, err := m.taskHead(ctx, t, ws.Branch); errors.Is(err, errLeftBranch) {
		return fmt.Errorf("workspace: task %s's worktree %s is not on branch %s any more (the task switched branches); its changes were left uncommitted there",
			taskID, ws.Dir, ws.Branch)
	} else if err != nil {
		return err
	}
	if err := m.stage(ctx, t); err != nil {
		return err
	}
	_, err = m.gitIn(ctx, t, nil, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv")
	switch {
	case err == nil: // nothing to commit
	case exitCode(err) != 1:
		return err
	default:
		name, email := m.identity(ctx, t)
		if _, err := m.gitIn(ctx, t, nil,
			"-c", "user.name="+name, "-c", "user.email="+email,
			"commit", "--quiet", "--no-verify", "--cleanup=whitespace", "-m", message); err != nil {
			return err
		}
	}
	// What the task committed itself joins the shared store now, checked;
	// then the branch names it (taskref.go). The shared object store takes
	// one import at a time (and nothing else of the repository's shared
	// state moves meanwhile).
	unlock, err := m.lock(ctx, t.common)
	if err != nil {
		return err
	}
	defer unlock()
	if err := m.importObjects(ctx, t.common, t.private); err != nil {
		return err
	}
	return m.publishHead(ctx, t, taskID, ws.Branch)
}

// stage does what `git add --all` does — every change to a tracked path,
// every new path .gitignore does not exclude, a nested repository as a
// gitlink — without entering nested repositories: `git add` runs `git
// status` in each one the index names, which reads the nested
// repository's own config, a file the task wrote (a filter or fsmonitor
// there would run). ls-files and update-index only read a nested
// repository's HEAD.
func (m *Manager) stage(ctx context.Context, t *tree) error {
	out, err := m.gitIn(ctx, t, nil, "ls-files", "-z", "-t", "--modified", "--deleted", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	// Tracked paths first: a file that became a directory must leave the
	// index before the files in that directory enter it.
	var tracked, others strings.Builder
	seen := map[string]bool{}
	for entry := range strings.SplitSeq(out, "\x00") {
		tag, path, ok := strings.Cut(entry, " ")
		if !ok || path == "" || seen[path] {
			continue
		}
		seen[path] = true
		if tag == "?" {
			// A nested repository is listed as "dir/"; update-index
			// wants the gitlink's path.
			others.WriteString(strings.TrimSuffix(path, "/") + "\x00")
		} else {
			tracked.WriteString(path + "\x00")
		}
	}
	list := tracked.String() + others.String()
	if list == "" {
		return nil
	}
	_, err = m.gitIn(ctx, t, strings.NewReader(list), "update-index", "--add", "--remove", "-z", "--stdin")
	return err
}

// identity returns the commit identity: the repository's own user.name and
// user.email where set, the Reasonix defaults otherwise.
func (m *Manager) identity(ctx context.Context, t *tree) (name, email string) {
	out, _ := m.gitIn(ctx, t, nil, "config", "--local", "-z", "--get-regexp", `^user\.(name|email)$`)
	for entry := range strings.SplitSeq(out, "\x00") {
		key, value, _ := strings.Cut(entry, "\n")
		switch key {
		case "user.name":
			name = value
		case "user.email":
			email = value
		}
	}
	return cmp.Or(name, DefaultAuthorName), cmp.Or(email, DefaultAuthorEmail)
}
