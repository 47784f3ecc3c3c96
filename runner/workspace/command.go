package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"reasonix/internal/procgroup"
)

// waitDelay bounds how long Wait keeps reading output after the command
// exited or was killed, in case something it started still holds the pipes.
const waitDelay = 2 * time.Second

// maxArgsQuoted bounds how much of a failed command line an error repeats.
const maxArgsQuoted = 200

// tailBytes is how much of a failing command's output an error quotes.
const tailBytes = 2048

// relocating are environment variables that point git at another
// repository or index. Inherited from a parent git process (a hook, say),
// they would make every command here act on the wrong repository.
var relocating = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
}

// cleanEnv drops the relocating variables from env.
func cleanEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
next:
	for _, kv := range env {
		for _, name := range relocating {
			if strings.HasPrefix(kv, name+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// gitError is a git command that failed. Its message quotes the tail of
// git's stderr with credentials redacted.
type gitError struct {
	args []string
	code int // exit code, or -1 when git did not run to completion
	err  error
	tail string
}

func (e *gitError) Error() string {
	args := strings.Join(e.args, " ")
	if len(args) > maxArgsQuoted { // a long commit message, say
		args = args[:maxArgsQuoted] + "…"
	}
	msg := fmt.Sprintf("workspace: git %s: %v", args, e.err)
	if e.tail != "" {
		msg += ": " + e.tail
	}
	return redact(msg)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode reports git's exit status from an error returned by git, or -1.
func exitCode(err error) int {
	if ge, ok := errors.AsType[*gitError](err); ok {
		return ge.code
	}
	return -1
}

// git runs the git binary with args in dir and returns its stdout with the
// trailing newline removed. When ctx ends, git's whole process group is
// killed.
func (m *Manager) git(ctx context.Context, dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, m.gitPath, append([]string{"-C", dir}, args...)...)
	cmd.Env = m.gitEnv
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	procgroup.Detach(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if err != nil {
		code := -1
		if ee, ok := errors.AsType[*exec.ExitError](err); ok && ctx.Err() == nil {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return "", &gitError{args: args, code: code, err: err, tail: tail(stderr.Bytes())}
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

// tail returns the last tailBytes of out, trimmed, on one logical unit.
func tail(out []byte) string {
	out = bytes.TrimSpace(out)
	if len(out) > tailBytes {
		out = append([]byte("…"), out[len(out)-tailBytes:]...)
	}
	return string(out)
}
