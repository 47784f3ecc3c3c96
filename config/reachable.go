package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// remoteCheckTimeout bounds `git ls-remote`: a check at start or in
// `config check` must not hang on an unreachable host.
const remoteCheckTimeout = 10 * time.Second

// CheckReachable reports whether the workspace can be used: its repository
// is reachable (a local path that is a git repository, or a URL that
// answers `git ls-remote`) and its base exists there. Validation alone
// cannot tell, and without this a wrong repo shows up only when a task
// fails. The error names the workspace and says what to fix; it never
// contains credentials embedded in a URL. It needs git on PATH.
func (w *Workspace) CheckReachable(ctx context.Context) error {
	var err error
	if isRemoteRepo(w.Repo) {
		err = checkRemoteWorkspace(ctx, w.Repo, w.Base)
	} else {
		err = checkLocalWorkspace(ctx, w.Repo, w.Base)
	}
	if err != nil {
		return fmt.Errorf("workspace %q: %w", w.Name, err)
	}
	return nil
}

// checkLocalWorkspace requires a directory that git recognises as a
// repository and a base that resolves to a commit in it.
func checkLocalWorkspace(ctx context.Context, repo, base string) error {
	st, err := os.Stat(repo)
	if err != nil {
		return fmt.Errorf("repo %s does not exist: set repo to a git repository's path or URL", repo)
	}
	if !st.IsDir() {
		return fmt.Errorf("repo %s is not a directory", repo)
	}
	if _, err := git(ctx, repo, "rev-parse", "--git-dir"); errors.Is(err, errNoGit) {
		return err
	} else if err != nil {
		return fmt.Errorf("repo %s is not a git repository (run git init there, or point repo elsewhere)", repo)
	}
	if _, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}"); err != nil {
		return fmt.Errorf("base %q is not a branch, tag or commit in %s: set base to an existing branch", base, repo)
	}
	return nil
}

// checkRemoteWorkspace asks the remote for its refs. A base that looks like
// a commit id cannot be checked without fetching, so only its form is taken.
func checkRemoteWorkspace(ctx context.Context, repo, base string) error {
	shown := redactURL(repo)
	if strings.HasPrefix(repo, "-") {
		return fmt.Errorf("repo %s is not a git URL", shown)
	}
	ctx, cancel := context.WithTimeout(ctx, remoteCheckTimeout)
	defer cancel()
	out, err := git(ctx, "", "ls-remote", "--heads", "--tags", repo)
	if errors.Is(err, errNoGit) {
		return err
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("repo %s did not answer within %s", shown, remoteCheckTimeout)
		}
		return fmt.Errorf("repo %s is not reachable (git ls-remote failed: check the URL and the credentials git uses)", shown)
	}
	if looksLikeCommit(base) {
		return nil
	}
	for line := range strings.SplitSeq(out, "\n") {
		_, ref, ok := strings.Cut(line, "\t")
		if ok && (ref == "refs/heads/"+base || ref == "refs/tags/"+base || ref == base) {
			return nil
		}
	}
	return fmt.Errorf("base %q is not a branch or tag of %s: set base to an existing branch", base, shown)
}

func looksLikeCommit(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

var errNoGit = errors.New("git is not on PATH: workspaces need it")

// git runs git without a terminal prompt (a check must never wait for a
// password) and returns its stdout.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	if dir != "" {
		cmd.Dir = filepath.Clean(dir)
	}
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	cmd.Stdin = nil
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errNoGit
		}
		return "", err
	}
	return out.String(), nil
}

// redactURL drops the user information (often a token) from a URL.
func redactURL(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return repo
	}
	u.User = nil
	return u.String()
}
