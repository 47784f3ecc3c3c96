package recipe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxFiles bounds how many files one directory read takes; the rest are
// ignored with a Warning.
const MaxFiles = 4096

// ReadDir reads the files under root for a Layer. A missing root is an
// empty layer. A symbolic link is followed only when it resolves to a
// regular file inside boundary (the repository, or root itself for a
// user directory); any other link is passed back Refused. Directories
// reached through links are not walked.
func ReadDir(root, boundary string) ([]File, error) {
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
		f := File{Path: rel}
		target := p
		if d.Type()&fs.ModeSymlink != 0 {
			if target, err = filepath.EvalSymlinks(p); err != nil || !inside(target, realBoundary) {
				f.Refused = "a symbolic link that leaves the repository is not followed"
				files = append(files, f)
				return nil
			}
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if info, err := os.Stat(target); err != nil || !info.Mode().IsRegular() {
				f.Refused = "a symbolic link to something other than a file is not followed"
				files = append(files, f)
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil // a socket or device is no recipe
		}
		if f.Data, err = readLimited(target); err != nil {
			f.Refused = err.Error()
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return files, fmt.Errorf("recipe: %w", err)
	}
	return files, nil
}

// readLimited reads a file, refusing one over MaxFileBytes without reading
// all of it.
func readLimited(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, errors.New("cannot be read")
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, errors.New("cannot be read")
	}
	if len(data) > MaxFileBytes {
		return nil, errors.New("larger than 64 KiB")
	}
	return data, nil
}

func inside(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
