package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeAtomic replaces the file at path with data: it writes a temporary
// file in the same directory and renames it over path, so a reader (or a
// crash) sees either the old or the new content, never half of it. The new
// file gets mode perm.
func writeAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".reasonix-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	// CreateTemp makes 0600 files; the result must keep the file's own mode.
	if err := tmp.Chmod(perm); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readTextFile reads a whole file that an edit tool is about to change,
// refusing directories and binary files with errors the model can act on.
func readTextFile(tool, name, path string) ([]byte, fs.FileMode, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%s: %s does not exist (use write_file to create a file)", tool, name)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", tool, err)
	}
	if info.IsDir() {
		return nil, 0, fmt.Errorf("%s: %s is a directory", tool, name)
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: %s is not a regular file", tool, name)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", tool, err)
	}
	if looksBinary(data) {
		return nil, 0, fmt.Errorf("%s: %s looks like a binary file (it contains NUL bytes); it cannot be edited as text", tool, name)
	}
	return data, info.Mode().Perm(), nil
}
