package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"reasonix/internal/procgroup"
)

// Checkout is a person's own linked worktree on a task branch
// (reasonix/…), detached for the length of one `reasonix run` in it.
//
// Why: to let the model's own `git commit` move the branch checked out
// there, the sandbox would have to write the branch's ref, and Landlock
// (like a bind mount) can grant only the whole refs/heads/reasonix
// directory — git writes <name>.lock beside the ref and renames it. A
// command in the run could then move every other reasonix/ branch of the
// repository. So `run` does what the service does for its tasks
// (taskref.go): HEAD is detached at the branch's commit before the
// sandbox is built (the sandbox then grants no shared ref at all, see
// policy's gitShared), the model's commits move only that HEAD, and at the
// end this side — git that runs nothing the repository or the run could
// configure — moves the branch to the commit HEAD is at and checks the
// branch out again.
type Checkout struct {
	dir     string // the work tree
	private string // <common>/worktrees/<name>, read before the run
	common  string
	branch  string // reasonix/…
	start   string // the branch's commit when the run began
	gitPath string
	env     []string
}

// Branch is the task branch the checkout had checked out.
func (c *Checkout) Branch() string { return c.branch }

// DetachCheckout detaches HEAD of dir when dir is a linked worktree (the
// layout `git worktree add` writes) with a reasonix/ branch checked out,
// and returns what Restore needs. Anything else — a plain repository, a
// worktree on another branch, an unborn branch, no git — is left alone:
// nil, nil. It must run before the run's sandbox is built.
func DetachCheckout(ctx context.Context, dir string) (*Checkout, error) {
	private, common, ok := linkedWorktree(dir)
	if !ok {
		return nil, nil
	}
	head, err := readSmall(filepath.Join(private, "HEAD"))
	if err != nil {
		return nil, nil
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(head), "ref: refs/heads/")
	if !ok || !strings.HasPrefix(ref, branchPrefix) || filepath.Clean(ref) != ref || strings.Contains(ref, "..") {
		return nil, nil
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, nil
	}
	c := &Checkout{dir: dir, private: private, common: common, branch: ref, gitPath: gitPath,
		env: hardenedEnv(append(cleanEnv(os.Environ()), "GIT_TERMINAL_PROMPT=0"))}
	start, err := c.git(ctx, c.common, "rev-parse", "--verify", "--quiet", "refs/heads/"+ref+"^{commit}")
	if err != nil || start == "" {
		return nil, nil // an unborn branch: nothing to detach at
	}
	c.start = start
	if _, err := c.git(ctx, c.private, "update-ref", "--no-deref", "-m", "reasonix run: detach from "+ref, "HEAD", start); err != nil {
		return nil, fmt.Errorf("workspace: detach %s from %s: %w", dir, ref, err)
	}
	return c, nil
}

// Restore moves the branch to the commit the worktree's HEAD is at and
// checks the branch out again. It returns the branch's commit. The run
// may have rewritten HEAD: a commit the shared repository does not hold,
// or HEAD on some other branch, leaves the branch where it was (and the
// worktree as the run left it), with an error that says so. The branch
// moves only from the commit it had when the run began.
func (c *Checkout) Restore(ctx context.Context) (string, error) {
	head, err := readSmall(filepath.Join(c.private, "HEAD"))
	if err != nil {
		return c.start, fmt.Errorf("workspace: read the HEAD of %s: %w", c.dir, err)
	}
	head = strings.TrimSpace(head)
	if r, ok := strings.CutPrefix(head, "ref: "); ok {
		if r == "refs/heads/"+c.branch {
			return c.start, nil // checked out again already; the branch itself could not move
		}
		return c.start, fmt.Errorf("workspace: the run left %s on %s; %s stays at %s", c.dir, r, c.branch, short(c.start))
	}
	if len(head) != 40 && len(head) != 64 || !isHex(head) {
		return c.start, fmt.Errorf("workspace: the HEAD of %s is not a commit; %s stays at %s", c.dir, c.branch, short(c.start))
	}
	// The common directory alone: the commit must be in the shared store.
	if _, err := c.git(ctx, c.common, "cat-file", "-e", head+"^{commit}"); err != nil {
		return c.start, fmt.Errorf("workspace: %s's HEAD %s is not a commit of the repository; %s stays at %s", c.dir, short(head), c.branch, short(c.start))
	}
	if head != c.start {
		if _, err := c.git(ctx, c.common, "update-ref", "-m", "reasonix run", "refs/heads/"+c.branch, head, c.start); err != nil {
			return c.start, fmt.Errorf("workspace: move %s to %s (HEAD of %s stays detached there): %w", c.branch, short(head), c.dir, err)
		}
	}
	if _, err := c.git(ctx, c.private, "symbolic-ref", "-m", "reasonix run: back to "+c.branch, "HEAD", "refs/heads/"+c.branch); err != nil {
		return head, fmt.Errorf("workspace: check %s out again in %s: %w", c.branch, c.dir, err)
	}
	return head, nil
}

// linkedWorktree returns the private and common git directories of dir
// when its .git file links it, as `git worktree add` does, to
// <common>/worktrees/<name> whose gitdir file names dir back — the same
// layout policy's gitShared grants write access by.
func linkedWorktree(dir string) (private, common string, ok bool) {
	dotGit, err := readSmall(filepath.Join(dir, ".git"))
	if err != nil {
		return "", "", false
	}
	gitdir, found := strings.CutPrefix(strings.TrimSpace(dotGit), "gitdir: ")
	if !found {
		return "", "", false
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	if gitdir, err = filepath.EvalSymlinks(gitdir); err != nil || filepath.Base(filepath.Dir(gitdir)) != "worktrees" {
		return "", "", false
	}
	back, err := readSmall(filepath.Join(gitdir, "gitdir"))
	if err != nil {
		return "", "", false
	}
	back = strings.TrimSpace(back)
	if !filepath.IsAbs(back) {
		back = filepath.Join(gitdir, back)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", false
	}
	if p, err := filepath.EvalSymlinks(filepath.Dir(back)); err != nil || p != real {
		return "", "", false
	}
	return gitdir, filepath.Dir(filepath.Dir(gitdir)), true
}

// git runs git with the checkout's directories given explicitly (gitDir
// is the common or the private directory; nothing in the worktree's .git,
// commondir or gitdir files decides) and the settings that run nothing.
func (c *Checkout) git(ctx context.Context, gitDir string, args ...string) (string, error) {
	env := append(append([]string(nil), c.env...), "GIT_DIR="+gitDir)
	if gitDir == c.private {
		env = append(env, "GIT_COMMON_DIR="+c.common)
	}
	argv := append(append(append([]string{"-C", c.common}, noExec...), local...), args...)
	cmd := exec.CommandContext(ctx, c.gitPath, argv...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	procgroup.Detach(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd) }
	cmd.WaitDelay = waitDelay
	if err := cmd.Run(); err != nil {
		code := -1
		if ee, ok := errors.AsType[*exec.ExitError](err); ok && ctx.Err() == nil {
			code = ee.ExitCode()
		}
		return "", &gitError{args: args, code: code, err: err, tail: tail(stderr.Bytes())}
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
