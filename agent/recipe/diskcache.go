package recipe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DirCache is ReadDir with memory: it keeps each root's files with the
// (path, size, modification time) they had when read, and on the next
// read of the same root and boundary walks the tree again (directory
// entries and one stat per file, no opens) and reads only the files whose
// stamp changed. A service re-reads the same skill roots at every task's
// start; most of the time nothing changed. The zero value is ready and it
// is safe for concurrent use.
type DirCache struct {
	mu    sync.Mutex
	roots map[dirKey]map[string]cachedFile
	// now is the clock for the racy-stamp rule; nil means time.Now.
	now func() time.Time
}

type dirKey struct{ root, boundary string }

// cachedFile is a file as it was read, and the stamp it was read under.
type cachedFile struct {
	size  int64
	mtime time.Time
	file  File
}

// racyWindow is how recent a modification may be for a stamp to be
// trusted: a file written again within the same clock tick and at the same
// size would keep its stamp, so one modified this recently is read again
// next time rather than remembered.
const racyWindow = 2 * time.Second

// ReadDir is recipe.ReadDir for root and boundary, from memory where a
// file's stamp is unchanged. Links are resolved and checked against
// boundary on every call, like ReadDir; a link is stamped by its target.
func (c *DirCache) ReadDir(root, boundary string) ([]File, error) {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	key := dirKey{root, boundary}
	c.mu.Lock()
	old := c.roots[key]
	c.mu.Unlock()
	fresh := make(map[string]cachedFile, len(old))
	files, err := walkDir(root, boundary, func(rel, target string, info fs.FileInfo) File {
		if e, ok := old[rel]; ok && e.size == info.Size() && e.mtime.Equal(info.ModTime()) {
			fresh[rel] = e
			return e.file
		}
		f := File{Path: rel}
		var rerr error
		if f.Data, rerr = readLimited(target); rerr != nil {
			f.Refused = rerr.Error()
		}
		if now().Sub(info.ModTime()) >= racyWindow {
			fresh[rel] = cachedFile{size: info.Size(), mtime: info.ModTime(), file: f}
		}
		return f
	})
	c.mu.Lock()
	if c.roots == nil {
		c.roots = map[dirKey]map[string]cachedFile{}
	}
	c.roots[key] = fresh
	c.mu.Unlock()
	return files, err
}

// walkDir is ReadDir's walk: the checks on root, boundary and links, with
// read producing each regular file (or link to one) that passed them.
func walkDir(root, boundary string, read func(rel, target string, info fs.FileInfo) File) ([]File, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	realBoundary, err := filepath.EvalSymlinks(boundary)
	if err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	if !inside(realRoot, realBoundary) {
		return nil, fmt.Errorf("recipe: %s resolves outside %s", root, boundary)
	}
	var files []File
	err = filepath.WalkDir(realRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable subdirectory: skip it, keep the rest
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(realRoot, p)
		rel = filepath.ToSlash(rel)
		if len(files) >= MaxFiles {
			return fs.SkipAll
		}
		target := p
		var info fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			if target, err = filepath.EvalSymlinks(p); err != nil || !inside(target, realBoundary) {
				files = append(files, File{Path: rel, Refused: "a symbolic link that leaves the repository is not followed"})
				return nil
			}
			if info, err = os.Stat(target); err != nil || !info.Mode().IsRegular() {
				files = append(files, File{Path: rel, Refused: "a symbolic link to something other than a file is not followed"})
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil // a socket or device is no recipe
		} else if info, err = d.Info(); err != nil {
			files = append(files, File{Path: rel, Refused: "cannot be read"})
			return nil
		}
		files = append(files, read(rel, target, info))
		return nil
	})
	if err != nil {
		return files, fmt.Errorf("recipe: %w", err)
	}
	return files, nil
}
