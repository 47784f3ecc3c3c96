package builtin

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"reasonix/agent"
)

// errNoGuard is returned by every file tool built without a PathGuard: an
// unguarded tool would bypass path confinement, so it refuses instead.
var errNoGuard = errors.New("no path guard configured")

// absPath makes p absolute against the workspace, so the guard always sees
// the same form whatever the model sent.
func absPath(env agent.ToolEnv, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(env.Workdir, p)
}

// readPath resolves p for reading through env.Paths.
func readPath(tool string, env agent.ToolEnv, p string) (string, error) {
	return guardPath(tool, env, p, false)
}

// writePath resolves p for writing through env.Paths.
func writePath(tool string, env agent.ToolEnv, p string) (string, error) {
	return guardPath(tool, env, p, true)
}

func guardPath(tool string, env agent.ToolEnv, p string, write bool) (string, error) {
	if env.Paths == nil {
		return "", fmt.Errorf("%s: %w", tool, errNoGuard)
	}
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%s: path must not be empty", tool)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%s: path contains a NUL byte", tool)
	}
	abs := absPath(env, p)
	var resolved string
	var err error
	if write {
		resolved, err = env.Paths.WritePath(abs)
	} else {
		resolved, err = env.Paths.ReadPath(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	return resolved, nil
}

// displayPath shows abs relative to the workspace when it lies inside it,
// which is shorter for the model and matches how it named the file.
func displayPath(env agent.ToolEnv, abs string) string {
	if env.Workdir == "" {
		return abs
	}
	rel, err := filepath.Rel(env.Workdir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// sniffLen is how much of a file decides whether it is binary; it matches
// what git and grep look at.
const sniffLen = 8000

// looksBinary reports whether data (the start of a file) holds a NUL byte,
// the cheap and conventional sign of a non-text file.
func looksBinary(data []byte) bool {
	if len(data) > sniffLen {
		data = data[:sniffLen]
	}
	return bytes.IndexByte(data, 0) >= 0
}
