package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Leftover is what the Manager still keeps on disk for one task: what
// garbage collection looks at. Which of it may go is the caller's policy
// (it knows whether the task finished and what was published); this
// package only says what is there and removes what it is told to.
type Leftover struct {
	Task     string
	Worktree bool // <root>/worktrees/<task>
	Scratch  bool // <root>/scratch/<task>
	// Record: <root>/meta/<task>.json, so the task's branch may still be
	// in its repository (Inspect says).
	Record bool
}

// Leftovers lists the tasks with a worktree, scratch directory or record
// under the root, by task id. Names that cannot be task ids (a temporary
// file, something a person put there) are not listed.
func (m *Manager) Leftovers() ([]Leftover, error) {
	byTask := map[string]*Leftover{}
	get := func(id string) *Leftover {
		l := byTask[id]
		if l == nil {
			l = &Leftover{Task: id}
			byTask[id] = l
		}
		return l
	}
	for _, dir := range []string{"worktrees", "scratch", "meta"} {
		entries, err := os.ReadDir(filepath.Join(m.root, dir))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("workspace: list %s: %w", dir, err)
		}
		for _, e := range entries {
			id := e.Name()
			if dir == "meta" {
				var ok bool
				if id, ok = strings.CutSuffix(id, ".json"); !ok || !e.Type().IsRegular() {
					continue
				}
			} else if !e.IsDir() {
				continue
			}
			if validTaskID(id) != nil {
				continue
			}
			switch l := get(id); dir {
			case "worktrees":
				l.Worktree = true
			case "scratch":
				l.Scratch = true
			default:
				l.Record = true
			}
		}
	}
	out := make([]Leftover, 0, len(byTask))
	for _, l := range byTask {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Leftover) int { return strings.Compare(a.Task, b.Task) })
	return out, nil
}

// Holding is what a task still holds in git, as Inspect found it.
type Holding struct {
	Worktree bool
	// Dirty: the worktree has changes no commit holds (untracked files
	// count; files .gitignore ignores do not, as Finish leaves them out).
	Dirty bool
	// Tampered says what changed in the worktree's links to its
	// repository; no git ran there, and nothing of it should be removed
	// before a person looked.
	Tampered string
	Branch   bool   // refs/heads/reasonix/<task> exists
	Head     string // its commit
	// Unpublished counts the branch's commits in neither its base nor the
	// published commit: work that exists nowhere else.
	Unpublished int
}

// Inspect reports what task taskID holds: its worktree (clean or not) and
// its branch (how many commits on it are in neither its base nor
// published, a commit the caller knows was pushed; "" for none). It reads
// the task's record, never a file the task could write: git runs on the
// worktree only through the record's layout, after verify.
func (m *Manager) Inspect(ctx context.Context, taskID, published string) (Holding, error) {
	rec, err := m.taskRecord(taskID)
	if err != nil {
		return Holding{}, err
	}
	if published != "" && !isObjectName(published) {
		return Holding{}, fmt.Errorf("%w: published commit %q is no object name", ErrInvalid, published)
	}
	unlock, err := m.lock(ctx, rec.GitDir)
	if err != nil {
		return Holding{}, err
	}
	defer unlock()
	var h Holding
	// A task's worktree has a detached HEAD that only Finish names on the
	// branch (taskref.go): commits the task made itself and no Finish
	// published are counted from there.
	var t *tree
	if fi, err := os.Lstat(m.worktreeDir(taskID)); err == nil && fi.IsDir() {
		h.Worktree = true
		var err error
		t, err = m.verify(taskID, rec)
		if te, ok := errors.AsType[*TamperedError](err); ok {
			h.Tampered, t = te.What, nil
		} else if err != nil {
			return Holding{}, err
		} else {
			out, err := m.gitIn(ctx, t, nil, "status", "--porcelain", "--untracked-files=all", "--ignore-submodules=none")
			if err != nil {
				return Holding{}, err
			}
			h.Dirty = out != ""
		}
	}
	ref := "refs/heads/" + BranchFor(taskID)
	head, err := m.git(ctx, rec.GitDir, "rev-parse", "--verify", "--quiet", ref)
	if err != nil && exitCode(err) != 1 { // 1: no such branch
		return Holding{}, err
	}
	if err == nil {
		h.Branch, h.Head = true, head
	}
	var not []string
	for _, c := range []string{rec.Base, published} {
		if c != "" {
			not = append(not, "^"+c)
		}
	}
	if h.Branch {
		if h.Unpublished, err = m.countCommits(taskID, func(args ...string) (string, error) {
			return m.git(ctx, rec.GitDir, args...)
		}, head, not); err != nil {
			return Holding{}, err
		}
		not = append(not, "^"+head)
	}
	if t != nil {
		// Through the worktree's layout, which sees its own objects.
		wt, err := m.gitIn(ctx, t, nil, "rev-parse", "--verify", "--quiet", "HEAD")
		if err != nil && exitCode(err) != 1 {
			return Holding{}, err
		}
		if err == nil && wt != head {
			n, err := m.countCommits(taskID, func(args ...string) (string, error) {
				return m.gitIn(ctx, t, nil, args...)
			}, wt, not)
			if err != nil {
				return Holding{}, err
			}
			h.Unpublished += n
		}
	}
	return h, nil
}

// countCommits counts the commits of tip not reachable from not, by git.
func (m *Manager) countCommits(taskID string, git func(args ...string) (string, error), tip string, not []string) (int, error) {
	out, err := git(append([]string{"rev-list", "--count", tip}, not...)...)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(out)
	if err != nil {
		return 0, fmt.Errorf("workspace: count the unpublished commits of task %s: %q", taskID, out)
	}
	return n, nil
}

// Collection is what Collect removes of a task.
type Collection struct {
	Worktree bool
	// Branch deletes the task's branch, only while it still points at
	// Head (a continuation that moved it meanwhile keeps it), and then
	// the record, which has nothing left to describe.
	Branch bool
	Head   string
	// Scratch removes the task's scratch directory.
	Scratch bool
	// Record removes the record alone, once neither the worktree nor the
	// branch it describes is left (Inspect says).
	Record bool
}

// Collect removes what c names of task taskID. A worktree goes as Remove
// takes it (its objects imported into the repository first); nothing
// already gone is an error.
func (m *Manager) Collect(ctx context.Context, taskID string, c Collection) error {
	if err := validTaskID(taskID); err != nil {
		return err
	}
	if c.Scratch {
		if err := m.removeTree(m.scratchDir(taskID)); err != nil {
			return err
		}
	}
	if !c.Worktree && !c.Branch {
		if c.Record {
			return m.dropRecord(taskID)
		}
		return nil
	}
	rec, err := m.taskRecord(taskID)
	if err != nil {
		return err
	}
	unlock, err := m.lock(ctx, rec.GitDir)
	if err != nil {
		return err
	}
	defer unlock()
	if c.Worktree {
		if err := m.dropWorktree(ctx, m.worktreeDir(taskID), rec.GitDir); err != nil {
			return err
		}
	}
	if !c.Branch {
		return nil
	}
	if !isObjectName(c.Head) {
		return fmt.Errorf("%w: branch head %q is no object name", ErrInvalid, c.Head)
	}
	if _, err := m.git(ctx, rec.GitDir, "update-ref", "-d", "refs/heads/"+BranchFor(taskID), c.Head); err != nil {
		return err
	}
	if err := m.dropRecord(taskID); err != nil {
		return err
	}
	m.log.Info("workspace: collected", "task", taskID, "worktree", c.Worktree, "branch", c.Branch)
	return nil
}

// dropRecord removes task taskID's record; one already gone is no error.
func (m *Manager) dropRecord(taskID string) error {
	if err := os.Remove(m.recordPath(taskID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace: remove the record of task %s: %w", taskID, err)
	}
	return nil
}
