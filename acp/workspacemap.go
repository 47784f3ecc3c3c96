package acp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"reasonix/config"
)

// maxGitConfig bounds the .git/config read to find a checkout's remotes.
const maxGitConfig = 1 << 20

// workspaceFor maps an editor's cwd to one of the configured workspaces:
// the one whose local repository holds cwd (the deepest), else the one
// whose repository URL is a remote of the checkout cwd lies in. The
// configuration is the one `reasonix acp` loaded; the service refuses a
// name it does not know when the task is submitted.
func workspaceFor(cwd string, list []config.Workspace) (string, bool) {
	best, bestLen := "", -1
	for _, w := range list {
		if w.Repo == "" || isURL(w.Repo) {
			continue
		}
		repo := filepath.Clean(w.Repo)
		if real, err := filepath.EvalSymlinks(repo); err == nil {
			repo = real
		}
		if within(cwd, repo) && len(repo) > bestLen {
			best, bestLen = w.Name, len(repo)
		}
	}
	if bestLen >= 0 {
		return best, true
	}
	remotes := checkoutRemotes(cwd)
	for _, w := range list {
		if w.Repo != "" && isURL(w.Repo) && slices.Contains(remotes, normalRemote(w.Repo)) {
			return w.Name, true
		}
	}
	return "", false
}

// workspaceDir is the local directory of workspace name, "" when its
// repository is not a local path.
func workspaceDir(name string, list []config.Workspace) string {
	for _, w := range list {
		if w.Name == name && w.Repo != "" && !isURL(w.Repo) {
			return filepath.Clean(w.Repo)
		}
	}
	return ""
}

// noWorkspace is the error of a cwd no workspace matches.
func noWorkspace(cwd string, list []config.Workspace) error {
	names := make([]string, 0, len(list))
	for _, w := range list {
		names = append(names, w.Name)
	}
	known := "none are configured here"
	if len(names) > 0 {
		known = "known: " + strings.Join(names, ", ")
	}
	return fmt.Errorf(`no workspace of the service holds %s (%s); name one in _meta["reasonix.io"].workspace`, cwd, known)
}

func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// isURL reports whether a workspace's repo is a git URL (scheme://… or
// the scp form user@host:path) rather than a local path.
func isURL(repo string) bool {
	if strings.Contains(repo, "://") {
		return true
	}
	at, colon := strings.Index(repo, "@"), strings.Index(repo, ":")
	return at > 0 && colon > at && !filepath.IsAbs(repo)
}

// checkoutRemotes finds the git checkout cwd lies in and returns its
// remotes' URLs, normalised. It reads .git/config; it runs nothing.
func checkoutRemotes(cwd string) []string {
	for dir := cwd; ; {
		gitDir := filepath.Join(dir, ".git")
		if st, err := os.Stat(gitDir); err == nil {
			if !st.IsDir() {
				// A worktree or submodule: ".git" names the real directory.
				b, err := os.ReadFile(gitDir)
				if err != nil {
					return nil
				}
				ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return nil
				}
				gitDir = strings.TrimSpace(ref)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(dir, gitDir)
				}
				// A linked worktree's remotes live in the common directory.
				if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
					common := strings.TrimSpace(string(c))
					if !filepath.IsAbs(common) {
						common = filepath.Join(gitDir, common)
					}
					gitDir = common
				}
			}
			f, err := os.Open(filepath.Join(gitDir, "config"))
			if err != nil {
				return nil
			}
			defer f.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(io.LimitReader(f, maxGitConfig))
			var out []string
			for _, u := range gitRemoteURLs(buf.Bytes()) {
				out = append(out, normalRemote(u))
			}
			return out
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// gitRemoteURLs reads the url keys of the [remote "…"] sections of a git
// config file. It understands what git writes (sections, key = value,
// comments, quoted values); anything else is skipped.
func gitRemoteURLs(data []byte) []string {
	var out []string
	inRemote := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxGitConfig)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				inRemote = false
				continue
			}
			sect := strings.TrimSpace(line[1:end])
			name, _, _ := strings.Cut(sect, " ")
			inRemote = strings.EqualFold(name, "remote") && len(name) < len(sect)
			continue
		}
		if !inRemote {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "url") {
			continue
		}
		value = strings.TrimSpace(value)
		if i := strings.IndexAny(value, "#;"); i >= 0 && !strings.HasPrefix(value, `"`) {
			value = strings.TrimSpace(value[:i])
		}
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		if value != "" {
			out = append(out, value)
		}
	}
	return out
}

// normalRemote is a git URL reduced to host/path, so the https, ssh and
// scp forms of one repository compare equal: no scheme, no user, no
// trailing ".git" or slash, lower-case host.
func normalRemote(u string) string {
	u = strings.TrimSpace(u)
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	} else if at, colon := strings.Index(u, "@"), strings.Index(u, ":"); at > 0 && colon > at {
		u = u[:colon] + "/" + u[colon+1:] // user@host:path → user@host/path
	}
	host, path, _ := strings.Cut(u, "/")
	if i := strings.LastIndex(host, "@"); i >= 0 {
		host = host[i+1:]
	}
	if h, port, ok := strings.Cut(host, ":"); ok && (port == "22" || port == "443" || port == "") {
		host = h
	}
	path = strings.TrimSuffix(strings.TrimRight(path, "/"), ".git")
	return strings.ToLower(host) + "/" + path
}
