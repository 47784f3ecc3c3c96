package workspace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"reasonix/internal/procgroup"
)

// Limits of ReadBase: recipes are small text files.
const (
	maxBaseFiles     = 4096
	maxBaseFileBytes = 64 << 10
)

// BaseFile is a file of a workspace's base commit. A symbolic link or a
// file over the size limit is returned with Skipped set and no Data, so
// the caller can say why it was left out.
type BaseFile struct {
	Path    string // relative to the directory asked for, slash-separated
	Data    []byte
	Skipped string
}

// ReadBase returns the files under each dir (repository-relative, e.g.
// ".reasonix/commands") as they are in the workspace's base commit — never
// in a task's worktree, so a task cannot change the recipes it runs by.
// A URL workspace's clone is synced first, as Prepare would. Symbolic
// links are never followed: in a tree they can point anywhere.
func (m *Manager) ReadBase(ctx context.Context, spec Spec, dirs ...string) (map[string][]BaseFile, error) {
	s, err := spec.normalize()
	if err != nil {
		return nil, err
	}
	gitDir, err := m.gitDirOf(ctx, s)
	if err != nil {
		return nil, err
	}
	sha, err := m.baseCommit(ctx, s, gitDir)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]BaseFile, len(dirs))
	for _, dir := range dirs {
		key := gitDir + "\x00" + sha + "\x00" + dir
		files, ok := m.baseCache.get(key)
		if !ok {
			if files, err = m.readTree(ctx, gitDir, sha, strings.Trim(dir, "/")); err != nil {
				return nil, err
			}
			m.baseCache.put(key, files)
		}
		out[dir] = files
	}
	return out, nil
}

// maxBaseCache bounds the trees ReadBase remembers.
const maxBaseCache = 64

// baseCache remembers what ReadBase read at a commit: a commit never
// changes, so a hit only costs resolving the base again. Callers must not
// modify the files it returns.
type baseCache struct {
	mu    sync.Mutex
	byKey map[string][]BaseFile
	order []string // oldest first
}

func (c *baseCache) get(key string) ([]BaseFile, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.byKey[key]
	return f, ok
}

func (c *baseCache) put(key string, files []BaseFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string][]BaseFile{}
	}
	if _, ok := c.byKey[key]; ok {
		return
	}
	if len(c.order) == maxBaseCache {
		delete(c.byKey, c.order[0])
		c.order = c.order[1:]
	}
	c.byKey[key] = files
	c.order = append(c.order, key)
}

// baseCommit resolves the base under the repository's lock, syncing a
// clone first.
func (m *Manager) baseCommit(ctx context.Context, s Spec, gitDir string) (string, error) {
	unlock, err := m.lock(ctx, gitDir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if isURL(s.Repo) {
		if err := m.syncClone(ctx, s, gitDir); err != nil {
			return "", err
		}
	}
	return m.resolveBase(ctx, s, gitDir)
}

// readTree lists dir at commit sha and reads its blobs in one cat-file.
func (m *Manager) readTree(ctx context.Context, gitDir, sha, dir string) ([]BaseFile, error) {
	// No --long: sizes would make ls-tree read every blob; cat-file's
	// header carries them anyway.
	list, err := m.git(ctx, gitDir, "ls-tree", "-r", "-z", "--full-tree", sha, "--", dir+"/")
	if err != nil {
		return nil, err
	}
	var files []BaseFile
	var blobs []string
	var wanted []int
	for entry := range strings.SplitSeq(list, "\x00") {
		if entry == "" || len(files) >= maxBaseFiles {
			continue
		}
		meta, path, ok := strings.Cut(entry, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			continue
		}
		rel := strings.TrimPrefix(path, dir+"/")
		mode, kind, id := fields[0], fields[1], fields[2]
		switch {
		case mode == "120000":
			files = append(files, BaseFile{Path: rel, Skipped: "a symbolic link is not followed"})
		case kind != "blob":
			continue // a submodule
		default:
			wanted = append(wanted, len(files))
			blobs = append(blobs, id)
			files = append(files, BaseFile{Path: rel})
		}
	}
	if len(blobs) == 0 {
		return files, nil
	}
	data, err := m.catBlobs(ctx, gitDir, blobs)
	if err != nil {
		return nil, err
	}
	for i, idx := range wanted {
		if data[i] == nil {
			files[idx].Skipped = "larger than 64 KiB"
			continue
		}
		files[idx].Data = data[i]
	}
	return files, nil
}

// catBlobs reads blobs with one `git cat-file --batch`; a blob over
// maxBaseFileBytes comes back nil, its content skipped unread.
func (m *Manager) catBlobs(ctx context.Context, gitDir string, ids []string) ([][]byte, error) {
	argv := append(append(append([]string{"-C", gitDir}, noExec...), local...), "cat-file", "--batch")
	cmd := exec.CommandContext(ctx, m.gitPath, argv...)
	cmd.Env = m.gitEnv
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	procgroup.Detach(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd) }
	cmd.WaitDelay = waitDelay
	if err := cmd.Run(); err != nil {
		return nil, &gitError{args: []string{"cat-file", "--batch"}, code: -1, err: err, tail: tail(stderr.Bytes())}
	}
	r := bufio.NewReader(&stdout)
	out := make([][]byte, 0, len(ids))
	for range ids {
		header, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("workspace: cat-file: %w", err)
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			return nil, fmt.Errorf("workspace: cat-file: unexpected header %q", strings.TrimSpace(header))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("workspace: cat-file: unexpected size in %q", strings.TrimSpace(header))
		}
		if n > maxBaseFileBytes {
			if _, err := r.Discard(n + 1); err != nil {
				return nil, fmt.Errorf("workspace: cat-file: %w", err)
			}
			out = append(out, nil)
			continue
		}
		buf := make([]byte, n+1) // the content and its trailing newline
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("workspace: cat-file: %w", err)
		}
		out = append(out, buf[:n])
	}
	return out, nil
}
