package runner

import (
	"errors"

	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// A task that changed how its worktree is linked to the repository (its
// .git file, commondir, gitdir or config.worktree) tried to make the
// service's own git follow config it wrote. The workspace refuses to run
// git there (workspace.ErrTampered); the task then ends failed, whatever
// its run reported, and its log says why with a workspace_tampered event.

// tamperedCode is the end code of such a task.
const tamperedCode = "workspace_tampered"

// tampered reports what the task changed when err is a refusal of a
// tampered worktree.
func tampered(err error) (what string, ok bool) {
	if te, ok := errors.AsType[*workspace.TamperedError](err); ok {
		return te.What, true
	}
	if errors.Is(err, workspace.ErrTampered) {
		return "its git links changed", true
	}
	return "", false
}

// tamperedOutcome is the end of a task whose worktree was refused.
func tamperedOutcome(what, ref string) outcome {
	return outcome{state: store.StateFailed, code: tamperedCode, ref: ref, tampered: what}
}

// tamperedEvent is the event that says so, written with the end.
func tamperedEvent(what string) event {
	return event{"workspace_tampered", map[string]any{"reason": what}}
}
