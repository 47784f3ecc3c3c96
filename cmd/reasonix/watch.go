package main

import (
	"context"

	"reasonix/runner/apitype"
	"reasonix/runner/client"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// streamEvent is one event of a task's stream.
type streamEvent = apitype.Event

// watchTask follows a task's events from the service's stream, printing
// them through v, until the task reaches a terminal state; it then returns
// the task. The client resumes a dropped stream from the last event seen.
func watchTask(ctx context.Context, c *client.Client, id string, v *watchView) (apitype.Task, error) {
	for ev, err := range c.Watch(ctx, id, 0) {
		if err != nil {
			return apitype.Task{}, notFound(err, "task", id)
		}
		v.show(ev)
	}
	t, err := c.Task(ctx, id)
	return t, notFound(err, "task", id)
}

// taskExit maps a task's final state to the exit code of `tasks watch`,
// the same codes `reasonix run` uses.
func taskExit(state apitype.TaskState) int { return session.ExitCode(store.State(state)) }
