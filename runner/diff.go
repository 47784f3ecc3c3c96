package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"reasonix/runner/workspace"
)

// MaxDiffBytes bounds what Diff returns of one task's diff.
const MaxDiffBytes = 8 << 20

// Diff returns task id's changes against the commit its branch started
// from (`git diff base...branch`), at most MaxDiffBytes; truncated says
// the diff was longer. The text is what the task wrote: show it as data.
// It is read on the node whose workspace holds the task's branch.
func (s *Service) Diff(ctx context.Context, id string) (diff []byte, truncated bool, err error) {
	t, err := s.Task(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if t.Workspace == "" {
		return nil, false, failf(ErrInvalid, "task %s ran in a scratch directory: it has no branch to diff", id)
	}
	branches, ok := s.cfg.Workspaces.(WorkspaceBranches)
	if !ok {
		return nil, false, failf(ErrInvalid, "this service keeps no task branches to diff")
	}
	buf := &capped{max: MaxDiffBytes}
	err = branches.Diff(ctx, id, buf)
	switch {
	case errors.Is(err, workspace.ErrNoRecord):
		return nil, false, failf(ErrNotFound, "task %s has no branch on this node (it may not have started, or ran on another node)", id)
	case err != nil && !buf.full:
		return nil, false, fmt.Errorf("runner: diff of task %s: %w", id, err)
	}
	return buf.Bytes(), buf.full, nil
}

// capped keeps the first max bytes written to it and then reports the
// writer full, which ends the git command writing.
type capped struct {
	bytes.Buffer
	max  int
	full bool
}

var errFull = errors.New("runner: diff longer than the bound")

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.Buffer.Write(p[:room])
		c.full = true
		return room, errFull
	}
	return c.Buffer.Write(p)
}

var _ io.Writer = (*capped)(nil)
