package workspace

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
	return m.readDirs(ctx, gitDir, sha, dirs)
}

// ReadBaseAt is ReadBase at a commit the service recorded (a task's base),
// so what a task reads stays the same while the branch moves on: a skill
// index read at every resume of a task is then the same bytes.
func (m *Manager) ReadBaseAt(ctx context.Context, spec Spec, commit string, dirs ...string) (map[string][]BaseFile, error) {
	if !isObjectName(commit) {
		return nil, fmt.Errorf("workspace: %q is not a full commit name", commit)
	}
	commit = strings.ToLower(commit)
	// A commit never changes: a task's every resume after the first is a
	// cache hit that runs no git at all (keyed like ReadAt's).
	out := make(map[string][]BaseFile, len(dirs))
	key := func(dir string) string {
		return "tree\x00" + spec.Name + "\x00" + spec.Repo + "\x00" + commit + "\x00" + dir
	}
	var missing []string
	for _, dir := range dirs {
		if files, ok := m.baseCache.get(key(dir)); ok {
			out[dir] = files
		} else {
			missing = append(missing, dir)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	s, err := spec.normalize()
	if err != nil {
		return nil, err
	}
	gitDir, err := m.gitDirOf(ctx, s)
	if err != nil {
		return nil, err
	}
	for _, dir := range missing {
		files, err := m.readTree(ctx, gitDir, commit, strings.Trim(dir, "/"))
		if err != nil {
			return nil, err
		}
		m.baseCache.put(key(dir), files)
		out[dir] = files
	}
	return out, nil
}

// readDirs reads each dir at commit sha, through the cache.
func (m *Manager) readDirs(ctx context.Context, gitDir, sha string, dirs []string) (map[string][]BaseFile, error) {
	var err error
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

// readTree lists dir at commit sha and reads its blobs, checking every
// object on the way — the commit, each tree from the root down, each
// blob — against its hash (objects.go): the shared object store is
// writable from a task's sandbox, and git itself would serve a replaced
// object as it is.
func (m *Manager) readTree(ctx context.Context, gitDir, sha, dir string) ([]BaseFile, error) {
	r, err := m.openObjects(ctx, gitDir)
	if err != nil {
		return nil, err
	}
	defer r.close()
	idLen := len(sha) / 2
	objs, err := r.batch([]string{sha}, maxTreeBytes)
	if err != nil {
		return nil, err
	}
	if objs[0].kind != "commit" || objs[0].data == nil {
		return nil, fmt.Errorf("workspace: %s is not a commit", sha)
	}
	tree, err := commitTree(objs[0].data)
	if err != nil {
		return nil, err
	}
	// Down to dir, one tree per path component.
	for name := range strings.SplitSeq(dir, "/") {
		if name == "" {
			continue
		}
		entries, err := r.tree(tree, idLen)
		if err != nil {
			return nil, err
		}
		next := ""
		for _, e := range entries {
			if e.name == name && e.mode == "40000" {
				next = e.id
			}
		}
		if next == "" {
			return nil, nil // no such directory at the base
		}
		tree = next
	}
	// Every tree below it, level by level (one batch each), then every
	// blob in one batch.
	trees := map[string][]treeEntry{}
	for level := []string{tree}; len(level) > 0; {
		objs, err := r.batch(level, maxTreeBytes)
		if err != nil {
			return nil, err
		}
		var below []string
		for i, o := range objs {
			if o.kind != "tree" || o.data == nil {
				return nil, fmt.Errorf("workspace: %s is not a tree of a size ReadBase reads", level[i])
			}
			entries, err := parseTree(o.data, idLen)
			if err != nil {
				return nil, err
			}
			trees[level[i]] = entries
			for _, e := range entries {
				if e.mode == "40000" {
					if _, seen := trees[e.id]; !seen && len(trees)+len(below) < maxBaseFiles {
						below = append(below, e.id)
					}
				}
			}
		}
		level = below
	}
	var files []BaseFile
	var blobs []string
	var wanted []int
	var walk func(id, prefix string)
	walk = func(id, prefix string) {
		for _, e := range trees[id] {
			if len(files) >= maxBaseFiles {
				return
			}
			switch e.mode {
			case "40000":
				walk(e.id, prefix+e.name+"/")
			case "120000":
				files = append(files, BaseFile{Path: prefix + e.name, Skipped: "a symbolic link is not followed"})
			case "160000":
				// a submodule
			default:
				wanted = append(wanted, len(files))
				blobs = append(blobs, e.id)
				files = append(files, BaseFile{Path: prefix + e.name})
			}
		}
	}
	walk(tree, "")
	if len(blobs) == 0 {
		return files, nil
	}
	data, err := r.batch(blobs, maxBaseFileBytes)
	if err != nil {
		return nil, err
	}
	for i, idx := range wanted {
		if data[i].data == nil {
			files[idx].Skipped = "larger than 64 KiB"
			continue
		}
		files[idx].Data = data[i].data
	}
	return files, nil
}

// maxTreeBytes bounds one tree object ReadBase reads (a directory of
// tens of thousands of entries).
const maxTreeBytes = 16 << 20

// tree reads and parses one tree object.
func (r *objectReader) tree(id string, idLen int) ([]treeEntry, error) {
	objs, err := r.batch([]string{id}, maxTreeBytes)
	if err != nil {
		return nil, err
	}
	if objs[0].kind != "tree" || objs[0].data == nil {
		return nil, fmt.Errorf("workspace: %s is not a tree of a size ReadBase reads", id)
	}
	return parseTree(objs[0].data, idLen)
}
