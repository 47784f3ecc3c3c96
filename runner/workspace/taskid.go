package workspace

import (
	"fmt"
	"strings"
)

// maxTaskIDLen bounds a task ID so it stays a sane path component and
// branch name on every filesystem.
const maxTaskIDLen = 128

// branchPrefix is where task branches live; the task ID follows it.
const branchPrefix = "reasonix/"

// validTaskID reports whether id may name a directory under the root and a
// branch: only [A-Za-z0-9_-], so no separator, dot or option-like value can
// make a path escape the root.
func validTaskID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty task id", ErrInvalid)
	}
	if len(id) > maxTaskIDLen {
		return fmt.Errorf("%w: task id longer than %d characters", ErrInvalid, maxTaskIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: task id %q: only letters, digits, '_' and '-' are allowed", ErrInvalid, id)
		}
	}
	return nil
}

// BranchFor returns the branch a task's worktree is on, reasonix/<taskID>.
func BranchFor(taskID string) string { return branchPrefix + taskID }

// taskFromBranch inverts BranchFor and validates the ID it finds.
func taskFromBranch(branch string) (string, error) {
	id, ok := strings.CutPrefix(branch, branchPrefix)
	if !ok {
		return "", fmt.Errorf("%w: branch %q is not a task branch (%s<task-id>)", ErrInvalid, branch, branchPrefix)
	}
	if err := validTaskID(id); err != nil {
		return "", err
	}
	return id, nil
}
