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

// ErrTampered: a task changed how its worktree is linked to the
// repository (its .git file, commondir, gitdir or config.worktree). The
// service runs no git in such a worktree; errors wrap it as a
// *TamperedError naming what changed.
var ErrTampered = errors.New("workspace: the task tampered with its worktree's git links")

// TamperedError says which of a worktree's git links changed since `git
// worktree add` wrote them. The worktree is left as it is, for
// inspection; nothing of it is committed.
type TamperedError struct {
	Task string
	What string // e.g. "the worktree's .git file changed"
	Path string
}

func (e *TamperedError) Error() string {
	return fmt.Sprintf("workspace: task %s's worktree was tampered with: %s (%s); the service runs no git in it and commits nothing of it", e.Task, e.What, e.Path)
}

// Is makes errors.Is(err, ErrTampered) hold.
func (e *TamperedError) Is(target error) bool { return target == ErrTampered }
