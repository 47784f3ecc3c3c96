package workspace

import (
	"context"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
)

// maxReadAtPaths bounds the files one ReadAt asks for.
const maxReadAtPaths = 256

// ReadAt returns the named files (repository-relative, slash-separated) as
// they are in commit, a full object name the service recorded itself (a
// Workspace's Base). A path that is not a regular file there is left out;
// a symbolic link or a file over 64 KiB is returned with Skipped set.
// Every object is checked against its hash on the way, as ReadBase does.
// What was read at a commit is remembered, keyed by the repository, the
// commit and the paths: a commit never changes, so a repeated read starts
// no git at all.
func (m *Manager) ReadAt(ctx context.Context, spec Spec, commit string, paths ...string) ([]BaseFile, error) {
	if !isObjectName(commit) {
		return nil, fmt.Errorf("workspace: %q is not a full commit name", commit)
	}
	if len(paths) > maxReadAtPaths {
		return nil, fmt.Errorf("workspace: at most %d files are read at once", maxReadAtPaths)
	}
	for _, p := range paths {
		if p == "" || p != path.Clean(p) || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("workspace: %q is not a repository-relative file path", p)
		}
	}
	key := "at\x00" + spec.Name + "\x00" + spec.Repo + "\x00" + strings.ToLower(commit) + "\x00" + strings.Join(paths, "\x00")
	if files, ok := m.baseCache.get(key); ok {
		return files, nil
	}
	s, err := spec.normalize()
	if err != nil {
		return nil, err
	}
	gitDir, err := m.gitDirOf(ctx, s)
	if err != nil {
		return nil, err
	}
	files, err := m.readFilesAt(ctx, gitDir, strings.ToLower(commit), paths)
	if err != nil {
		return nil, err
	}
	m.baseCache.put(key, files)
	return files, nil
}

// isObjectName reports whether s is a full SHA-1 or SHA-256 object name.
func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// readFilesAt reads paths at commit sha, each tree on the way read once.
func (m *Manager) readFilesAt(ctx context.Context, gitDir, sha string, paths []string) ([]BaseFile, error) {
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
	root, err := commitTree(objs[0].data)
	if err != nil {
		return nil, err
	}
	// dirs maps a directory ("" the root) to its tree's entries; nil
	// entries for a directory that does not exist at the commit.
	dirs := map[string][]treeEntry{}
	var entriesOf func(dir string) ([]treeEntry, error)
	entriesOf = func(dir string) ([]treeEntry, error) {
		if e, ok := dirs[dir]; ok {
			return e, nil
		}
		id := root
		if dir != "" {
			parent, name := path.Split(dir)
			up, err := entriesOf(strings.TrimSuffix(parent, "/"))
			if err != nil {
				return nil, err
			}
			id = ""
			for _, e := range up {
				if e.name == name && e.mode == "40000" {
					id = e.id
				}
			}
			if id == "" {
				dirs[dir] = nil
				return nil, nil
			}
		}
		e, err := r.tree(id, idLen)
		if err != nil {
			return nil, err
		}
		dirs[dir] = e
		return e, nil
	}
	var files []BaseFile
	var blobs []string
	for _, p := range paths {
		dir, name := path.Split(p)
		entries, err := entriesOf(strings.TrimSuffix(dir, "/"))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.name != name {
				continue
			}
			switch e.mode {
			case "100644", "100755":
				files = append(files, BaseFile{Path: p})
				blobs = append(blobs, e.id)
			case "120000":
				files = append(files, BaseFile{Path: p, Skipped: "a symbolic link is not followed"})
				blobs = append(blobs, "")
			}
		}
	}
	var want []string
	for _, b := range blobs {
		if b != "" {
			want = append(want, b)
		}
	}
	if len(want) == 0 {
		return files, nil
	}
	data, err := r.batch(want, maxBaseFileBytes)
	if err != nil {
		return nil, err
	}
	j := 0
	for i, b := range blobs {
		if b == "" {
			continue
		}
		switch {
		case data[j].kind != "blob":
			files[i].Skipped = "not a file"
		case data[j].data == nil:
			files[i].Skipped = "larger than 64 KiB"
		default:
			files[i].Data = data[j].data
		}
		j++
	}
	return files, nil
}
