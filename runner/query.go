package runner

import (
	"context"
	"fmt"

	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

// Task returns the task with id, or an error wrapping ErrNotFound.
func (s *Service) Task(ctx context.Context, id string) (store.Task, error) {
	t, err := s.st.Task(ctx, id)
	return t, mapStoreErr(err, "task "+id)
}

// Durations splits task t's time into queued, running and waiting for
// approval, from its task_state events — the split the CLI, the API, the
// dashboard and chat all show. A live task's current state lasts until
// now, an ended one's until it ended.
func (s *Service) Durations(ctx context.Context, t store.Task) (apitype.Durations, error) {
	evs, err := s.st.EventsOfType(ctx, t.ID, apitype.EventTaskState)
	if err != nil {
		return apitype.Durations{}, fmt.Errorf("runner: durations of task %s: %w", t.ID, err)
	}
	changes := make([]apitype.StateChange, 0, len(evs))
	for _, e := range evs {
		if st, ok := apitype.StateOf(apitype.EventTaskState, e.Payload); ok {
			changes = append(changes, apitype.StateChange{State: st, At: e.Time})
		}
	}
	now := s.now()
	if !t.FinishedAt.IsZero() && t.State.Terminal() {
		now = t.FinishedAt
	}
	return apitype.SplitDurations(t.CreatedAt, changes, now), nil
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
