package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tree is a task's worktree as the service's git sees it: every directory
// comes from the Manager's record, none from a file in the worktree.
type tree struct {
	dir     string // the work tree, <root>/worktrees/<task>
	private string // its git directory, <common>/worktrees/<admin>
	common  string // the repository's common git directory
}

// layout is what `git worktree add` wrote to link a worktree to its
// repository, as the record keeps it. The task can write every one of
// these files (the worktree is its directory, the private git directory
// holds its HEAD and index), and each would make a git started in the
// worktree use another repository or more config.
type layout struct {
	Admin          string `json:"admin"`                     // the name of the private directory under <common>/worktrees
	DotGit         string `json:"dot_git"`                   // <worktree>/.git
	CommonDir      string `json:"commondir"`                 // <private>/commondir
	GitDirFile     string `json:"gitdir"`                    // <private>/gitdir
	WorktreeConfig string `json:"config_worktree,omitempty"` // sha256 of <private>/config.worktree; "" when there was none
}

// maxLayoutFile bounds what verify reads of one of the layout's files:
// git writes a line, so anything longer is a change anyway.
const maxLayoutFile = 8 << 10

// snapshot records the layout of the worktree git has just added at dir
// for a repository whose common directory is common. It runs before the
// task does, so the .git file can be believed this once.
func snapshot(dir, common string) (*layout, error) {
	dotGit, err := readSmall(filepath.Join(dir, ".git"))
	if err != nil {
		return nil, fmt.Errorf("workspace: read the new worktree's .git file: %w", err)
	}
	private, ok := strings.CutPrefix(strings.TrimSpace(dotGit), "gitdir: ")
	if !ok {
		return nil, fmt.Errorf("workspace: the new worktree's .git file is not a link to a git directory")
	}
	if !filepath.IsAbs(private) {
		private = filepath.Join(dir, private)
	}
	admin := filepath.Base(private)
	if !samePath(filepath.Dir(private), filepath.Join(common, "worktrees")) {
		return nil, fmt.Errorf("workspace: the new worktree's git directory %s is not under %s", private, filepath.Join(common, "worktrees"))
	}
	l := &layout{Admin: admin, DotGit: dotGit}
	private = filepath.Join(common, "worktrees", admin)
	if l.CommonDir, err = readSmall(filepath.Join(private, "commondir")); err != nil {
		return nil, fmt.Errorf("workspace: read the new worktree's commondir: %w", err)
	}
	if l.GitDirFile, err = readSmall(filepath.Join(private, "gitdir")); err != nil {
		return nil, fmt.Errorf("workspace: read the new worktree's gitdir: %w", err)
	}
	switch wc, err := readSmall(filepath.Join(private, "config.worktree")); {
	case err == nil:
		l.WorktreeConfig = digest(wc)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("workspace: read the new worktree's config.worktree: %w", err)
	}
	return l, nil
}

// legacyLayout is what git (before worktree.useRelativePaths) writes for a
// worktree named after its task, for a record made before layouts were
// kept.
func legacyLayout(taskID, dir, common string) *layout {
	private := filepath.Join(common, "worktrees", taskID)
	return &layout{Admin: taskID, DotGit: "gitdir: " + private + "\n", CommonDir: "../..\n", GitDirFile: filepath.Join(dir, ".git") + "\n"}
}

// verify checks that the task's worktree is still linked to its
// repository exactly as git linked it, and returns the tree to run git on.
// Anything changed is a *TamperedError: the service then runs no git there
// at all.
func (m *Manager) verify(taskID string, rec *record) (*tree, error) {
	dir := m.worktreeDir(taskID)
	l := rec.Layout
	if l == nil {
		l = legacyLayout(taskID, dir, rec.GitDir)
	}
	if l.Admin == "" || l.Admin != filepath.Base(l.Admin) || strings.HasPrefix(l.Admin, ".") {
		return nil, &TamperedError{Task: taskID, What: "the record's worktree name", Path: m.recordPath(taskID)}
	}
	t := &tree{dir: dir, private: filepath.Join(rec.GitDir, "worktrees", l.Admin), common: rec.GitDir}
	if fi, err := os.Lstat(t.private); err != nil || !fi.IsDir() {
		return nil, &TamperedError{Task: taskID, What: "its private git directory is missing or not a directory", Path: t.private}
	}
	checks := []struct {
		what, path, want string
	}{
		{"the worktree's .git file", filepath.Join(dir, ".git"), l.DotGit},
		{"the worktree's commondir file", filepath.Join(t.private, "commondir"), l.CommonDir},
		{"the worktree's gitdir file", filepath.Join(t.private, "gitdir"), l.GitDirFile},
	}
	for _, c := range checks {
		if got, err := readSmall(c.path); err != nil || got != c.want {
			return nil, &TamperedError{Task: taskID, What: c.what + " changed", Path: c.path}
		}
	}
	wcPath := filepath.Join(t.private, "config.worktree")
	wc, err := readSmall(wcPath)
	switch {
	case errors.Is(err, fs.ErrNotExist) && l.WorktreeConfig == "":
	case err == nil && digest(wc) == l.WorktreeConfig:
	default:
		return nil, &TamperedError{Task: taskID, What: "the worktree's config.worktree appeared or changed", Path: wcPath}
	}
	return t, nil
}

// readSmall reads a regular file (not a symbolic link) of at most
// maxLayoutFile bytes. The task is not running while the service checks,
// so the Lstat and the read see the same file.
func readSmall(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxLayoutFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxLayoutFile {
		return "", fmt.Errorf("%s is larger than a git link file", path)
	}
	return string(b), nil
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
