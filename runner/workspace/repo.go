package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxListedBranches bounds the branch list a "base not found" error offers.
const maxListedBranches = 10

// gitDirOf returns the common git directory a spec's worktrees hang off:
// the local repository's, or the Manager's clone of a URL (which may not
// exist yet). It is also the key of the repository's lock.
func (m *Manager) gitDirOf(ctx context.Context, s Spec) (string, error) {
	if isURL(s.Repo) {
		return m.cloneDir(s.Name), nil
	}
	where := fmt.Sprintf("check repo in the [[workspaces]] entry %q", s.Name)
	if _, err := os.Stat(s.Repo); err != nil {
		return "", fmt.Errorf("workspace: repository %s is not accessible: %s: %w", s.Repo, where, err)
	}
	out, err := m.git(ctx, s.Repo, "rev-parse", "--git-common-dir")
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", fmt.Errorf("workspace: %s is not a git repository: %s: %w", s.Repo, where, err)
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(s.Repo, out)
	}
	dir, err := filepath.EvalSymlinks(out)
	if err != nil {
		return "", fmt.Errorf("workspace: resolve git directory of %s: %w", s.Repo, err)
	}
	return dir, nil
}

// syncClone makes the Manager's bare clone of a URL workspace current:
// cloned on first use, fetched on every later one. The caller holds the
// repository's lock.
func (m *Manager) syncClone(ctx context.Context, s Spec, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		bare, err := m.git(ctx, dir, "rev-parse", "--is-bare-repository")
		if err == nil && bare == "true" {
			return m.fetch(ctx, s, dir)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m.log.Warn("workspace: replacing a broken clone", "workspace", s.Name, "dir", dir)
		if err := m.removeTree(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("workspace: clone %s: %w", redact(s.Repo), err)
	}
	// Clone into a temporary name and rename, so an interrupted clone is
	// never mistaken for a complete one.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".clone-"+s.Name+"-")
	if err != nil {
		return fmt.Errorf("workspace: clone %s: %w", redact(s.Repo), err)
	}
	defer func() { _ = m.removeTree(tmp) }()
	// init + remote add rather than clone --bare: the remote's branches
	// then live in refs/remotes/origin/* and stay current on fetch, and the
	// task branches in refs/heads/* are ours alone.
	if _, err := m.git(ctx, tmp, "init", "--bare", "--quiet"); err != nil {
		return err
	}
	if _, err := m.git(ctx, tmp, "remote", "add", "origin", s.Repo); err != nil {
		return err
	}
	if err := m.fetch(ctx, s, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("workspace: clone %s: %w", redact(s.Repo), err)
	}
	m.log.Info("workspace: cloned", "workspace", s.Name, "repo", redact(s.Repo), "dir", dir)
	return nil
}

// fetch updates the clone's remote-tracking branches and tags, following a
// repo URL that changed in the configuration.
func (m *Manager) fetch(ctx context.Context, s Spec, dir string) error {
	url, err := m.git(ctx, dir, "config", "--get", "remote.origin.url")
	if err != nil || url != s.Repo {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err := m.git(ctx, dir, "remote", "set-url", "origin", s.Repo); err != nil {
			return err
		}
	}
	if _, err := m.gitNet(ctx, dir, "fetch", "--quiet", "--prune", "--tags", "origin"); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("workspace: fetch %s for workspace %q failed; check the URL and the credentials git uses: %w", redact(s.Repo), s.Name, err)
	}
	return nil
}

// resolveBase finds the commit s.Base names in the repository. For a clone,
// a branch of the remote wins over a tag, and a commit ID works as well.
func (m *Manager) resolveBase(ctx context.Context, s Spec, gitDir string) (string, error) {
	candidates := []string{s.Base}
	if isURL(s.Repo) {
		candidates = []string{"refs/remotes/origin/" + s.Base, "refs/tags/" + s.Base, s.Base}
	}
	for _, c := range candidates {
		sha, err := m.git(ctx, gitDir, "rev-parse", "--verify", "--quiet", "--end-of-options", c+"^{commit}")
		if err == nil {
			return sha, nil
		}
		if exitCode(err) != 1 {
			return "", err
		}
	}
	return "", m.baseNotFound(ctx, s, gitDir)
}

// baseNotFound builds the error for a missing base, listing the branches
// that do exist so the fix is obvious.
func (m *Manager) baseNotFound(ctx context.Context, s Spec, gitDir string) error {
	pattern, format := "refs/heads", "%(refname:short)"
	if isURL(s.Repo) {
		pattern, format = "refs/remotes/origin", "%(refname:lstrip=3)"
	}
	var branches []string
	if out, err := m.git(ctx, gitDir, "for-each-ref", "--format="+format, pattern); err == nil {
		for b := range strings.SplitSeq(out, "\n") {
			if b != "" && b != "HEAD" && !strings.HasPrefix(b, branchPrefix) && len(branches) < maxListedBranches {
				branches = append(branches, b)
			}
		}
	}
	msg := fmt.Sprintf("base %q not found in repository %s: set base = \"...\" in the [[workspaces]] entry %q to an existing branch, tag or commit",
		s.Base, redact(s.Repo), s.Name)
	if len(branches) > 0 {
		msg += " (branches: " + strings.Join(branches, ", ") + ")"
	}
	return fmt.Errorf("%w: %s", ErrBaseNotFound, msg)
}
