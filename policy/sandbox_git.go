package policy

import (
	"os"
	"path/filepath"
	"strings"
)

// taskRefDir is where the runner's task branches live (runner/workspace
// names them reasonix/<task-id>). A worktree on such a branch may update
// refs there; every other ref of the shared repository stays read-only.
const taskRefDir = "refs/heads/reasonix"

// gitShared returns what a linked git worktree at root must write outside
// itself to commit on its own branch: its private directory in the shared
// repository (<common>/worktrees/<name>: HEAD, index, its reflog and, for
// a runner's task, its own object directory), the shared object store
// only for a worktree without one, and the task-branch directory with its
// reflogs. The rest of the shared .git — config, hooks, packed-refs,
// every other branch — stays read-only to the sandbox, so a task cannot plant a hook or a
// core.hooksPath that the repository's owner would run next.
//
// Why a worktree with this carve-out rather than a clone per task: a
// clone's config and hooks would be the task's own, and the service's
// later git commands in it (the final commit) would run whatever the task
// planted there; a worktree reads config and hooks from the read-only
// shared directory. Speed does not decide it: for 400 files `git worktree
// add` and `git clone --local` both take about 0.1 s (docs/SPEC.md).
//
// Everything is read from files the task could have rewritten in an
// earlier session (<root>/.git, <gitdir>/gitdir), so each step is checked
// against the layout git itself creates; anything unexpected grants
// nothing (commits then fail inside the sandbox, nothing else does).
//
// A runner's task worktree has an object directory of its own in its
// private directory (GitEnv) and a detached HEAD: the shared object store
// and every shared ref stay read-only, so a task can neither replace an
// object other tasks or the owner read nor move another task's branch;
// the runner imports the task's objects, re-hashed, and moves its branch
// when it finishes.
//
// A user's own linked worktree on a reasonix/ branch gets the branch
// directory, so that the model's `git commit` can move its branch; a
// command could then move the other reasonix/ branches too. `reasonix
// run` therefore detaches HEAD there before the sandbox is made and moves
// the branch itself when the run ends (runner/workspace/checkout.go), so
// for it no shared ref is writable; `reasonix acp` still gets the grant.
func gitShared(root string) []string {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return nil // a plain repository (a .git directory) or none at all
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return nil
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	if gitdir, err = filepath.EvalSymlinks(gitdir); err != nil {
		return nil
	}
	if filepath.Base(filepath.Dir(gitdir)) != "worktrees" {
		return nil
	}
	// The worktree's private directory names the worktree it belongs to;
	// one of another repository's worktrees would name another directory.
	back, err := os.ReadFile(filepath.Join(gitdir, "gitdir"))
	if err != nil {
		return nil
	}
	if p, err := filepath.EvalSymlinks(filepath.Dir(strings.TrimSpace(string(back)))); err != nil || p != root {
		return nil
	}
	common := filepath.Dir(filepath.Dir(gitdir))
	out := []string{gitdir}
	if fi, err := os.Lstat(filepath.Join(gitdir, "objects")); err == nil && fi.IsDir() {
		// A runner's task worktree (an object directory of its own, see
		// GitEnv): its HEAD is detached, and the runner moves the task
		// branch when the task finishes (runner/workspace/taskref.go), so
		// no shared ref is writable — no task can move another's branch.
		return out
	}
	// A user's own worktree commits to the shared store.
	out = append(out, filepath.Join(common, "objects"))
	head, err := os.ReadFile(filepath.Join(gitdir, "HEAD"))
	if err != nil {
		return out
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
	if ok && strings.HasPrefix(ref, taskRefDir+"/") && filepath.Clean(ref) == ref && !strings.Contains(ref, "..") {
		out = append(out, filepath.Join(common, taskRefDir), filepath.Join(common, "logs", taskRefDir))
	}
	return out
}

// GitEnv is what bash in a runner's task worktree needs for git to write
// the task's objects to its own object directory (<private>/objects, made
// by the runner) and read the shared store as an alternate, read-only:
// GIT_OBJECT_DIRECTORY and GIT_ALTERNATE_OBJECT_DIRECTORIES. Nil for any
// other workspace.
func (c *Confinement) GitEnv() []string {
	if len(c.gitShared) == 0 {
		return nil
	}
	private := c.gitShared[0]
	objects := filepath.Join(private, "objects")
	if fi, err := os.Lstat(objects); err != nil || !fi.IsDir() {
		return nil
	}
	common := filepath.Dir(filepath.Dir(private))
	return []string{"GIT_OBJECT_DIRECTORY=" + objects, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(common, "objects")}
}
