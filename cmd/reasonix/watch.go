package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"reasonix/internal/sse"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// submitTask posts a task for `reasonix tasks submit` and returns its id.
func (c *apiClient) submitTask(body map[string]any) (string, error) {
	var out struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	if err := c.do("POST", "/api/v1/tasks", body, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// streamEvent is one event of a task's stream.
type streamEvent struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// watch follows a task's events from the service's stream, printing one
// line per event to w, until the task reaches a terminal state; it then
// returns the task. A dropped stream is resumed from the last event seen.
func (c *apiClient) watch(ctx context.Context, id string, v *watchView) (task, error) {
	var after int64
	client := &http.Client{} // a stream has no overall deadline
	for attempt := 0; ; attempt++ {
		done, err := c.followOnce(ctx, client, id, &after, v)
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) || attempt >= 5 || ctx.Err() != nil {
				return task{}, notFound(err, "task", id)
			}
			time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
			continue
		}
		if done {
			var t task
			err := c.do("GET", "/api/v1/tasks/"+url.PathEscape(id), nil, &t)
			return t, err
		}
	}
}

// followOnce reads one connection of the stream; done reports a terminal state.
func (c *apiClient) followOnce(ctx context.Context, client *http.Client, id string, after *int64, v *watchView) (done bool, err error) {
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/v1/tasks/%s/events/stream?after=%d", c.base, url.PathEscape(id), *after), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return false, fmt.Errorf("cannot reach the service at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := &apiError{Status: resp.StatusCode}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(data, e) != nil || e.Code == "" {
			e.Code, e.Message = http.StatusText(resp.StatusCode), strings.TrimSpace(string(data))
		}
		return false, e
	}
	rd := sse.NewReader(resp.Body, 0)
	for {
		msg, err := rd.Next()
		if err != nil {
			return false, err // EOF too: the stream ended before the task did
		}
		var ev streamEvent
		if json.Unmarshal([]byte(msg.Data), &ev) != nil {
			continue
		}
		*after = ev.Seq
		v.show(ev)
		if ev.Type == "task_state" {
			var p struct{ State string }
			_ = json.Unmarshal(ev.Payload, &p)
			switch p.State {
			case "succeeded", "failed", "blocked", "cancelled", "interrupted", "budget_exhausted":
				return true, nil
			}
		}
	}
}

// taskExit maps a task's final state to the exit code of `tasks watch`,
// the same codes `reasonix run` uses.
func taskExit(state string) int { return session.ExitCode(store.State(state)) }
