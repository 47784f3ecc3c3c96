package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"reasonix/agent"
)

// writeText is the final write of a text-file tool: through env.Files
// when it is set (an editor's buffers), else writeAtomic. Every check
// happened before.
func writeText(ctx context.Context, env agent.ToolEnv, path string, data []byte, perm fs.FileMode) error {
	if env.Files != nil {
		return env.Files.WriteText(ctx, path, string(data))
	}
	return writeAtomic(path, data, perm)
}

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
// Its final read goes through env.Files when it is set.
func readTextFile(ctx context.Context, env agent.ToolEnv, tool, name, path string) ([]byte, fs.FileMode, error) {
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
	var data []byte
	if env.Files != nil {
		var text string
		text, err = env.Files.ReadText(ctx, path)
		data = []byte(text)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", tool, err)
	}
	if looksBinary(data) {
		return nil, 0, fmt.Errorf("%s: %s looks like a binary file (it contains NUL bytes); it cannot be edited as text", tool, name)
	}
	return data, info.Mode().Perm(), nil
}
