package recipe

import (
	"errors"
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
	return walkDir(root, boundary, func(rel, target string, _ fs.FileInfo) File {
		f := File{Path: rel}
		var err error
		if f.Data, err = readLimited(target); err != nil {
			f.Refused = err.Error()
		}
		return f
	})
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
