package runner

import (
	"context"
	"fmt"

	"reasonix/runner/store"
)

// Task returns the task with id, or an error wrapping ErrNotFound.
func (s *Service) Task(ctx context.Context, id string) (store.Task, error) {
	t, err := s.st.Task(ctx, id)
	return t, mapStoreErr(err, "task "+id)
}

// Tasks lists tasks newest first, one page at a time (see store.TaskFilter).
func (s *Service) Tasks(ctx context.Context, f store.TaskFilter) (store.TaskPage, error) {
	p, err := s.st.ListTasks(ctx, f)
	return p, mapStoreErr(err, "the task list")
}

// Events returns up to limit (default 1000) events of task id with Seq >
// after. An unknown task is an error wrapping ErrNotFound.
func (s *Service) Events(ctx context.Context, id string, after int64, limit int) ([]store.Event, error) {
	if _, err := s.Task(ctx, id); err != nil {
		return nil, err
	}
	evs, err := s.st.Events(ctx, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("runner: events: %w", err)
	}
	return evs, nil
}
