package workspace

import (
	"errors"
	"fmt"
)

// Sentinel conditions; errors from this package wrap them, so callers test
// with errors.Is.
var (
	// ErrInvalid: a task ID, Spec or Workspace was rejected before anything
	// was touched.
	ErrInvalid = errors.New("workspace: invalid input")
	// ErrBaseNotFound: the workspace's base ref does not exist in its
	// repository; the message names the ones that do.
	ErrBaseNotFound = errors.New("workspace: base not found")
	// ErrNoRecord: Finish or Remove got a worktree Workspace this Manager's
	// root holds no record of (another root, or never prepared).
	ErrNoRecord = errors.New("workspace: no record of the task's worktree")
)

// SetupError is a setup command that failed, timed out or was cancelled.
// Output is the tail of what it printed (stdout and stderr interleaved).
type SetupError struct {
	Workspace string
	Command   string
	Output    string
	Err       error
}

func (e *SetupError) Error() string {
	msg := fmt.Sprintf("workspace: setup command %q of workspace %q failed: %v", e.Command, e.Workspace, e.Err)
	if e.Output != "" {
		msg += "; output:\n" + e.Output
	}
	return redact(msg)
}

func (e *SetupError) Unwrap() error { return e.Err }
