package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"

	"reasonix/internal/backoff"
	"reasonix/internal/sse"
	"reasonix/runner/apitype"
)

// Watch follows task id's events with a sequence number above after: the
// stored ones first, then each new one as the task runs, from the
// service's event stream. A dropped connection is resumed from the last
// event seen, so no event is missed or repeated. The sequence ends after
// the event that puts the task in a terminal state (Event.EndsTask), when
// the loop stops, or with an error: ctx's, an *Error from the service (an
// unknown task, ErrTooManyStreams), or the last failure once the stream
// could not be resumed (see WithWatchRetries).
//
//	for ev, err := range c.Watch(ctx, id, 0) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(ev.Seq, ev.Type)
//	}
func (c *Client) Watch(ctx context.Context, id string, after int64) iter.Seq2[apitype.Event, error] {
	return func(yield func(apitype.Event, error) bool) {
		wait := backoff.Policy{Base: c.watchWait, Cap: 16 * c.watchWait}
		for failures := 0; ; {
			seen := after
			ended, stopped, err := c.follow(ctx, id, &after, yield)
			if ended || stopped {
				return
			}
			if after > seen {
				failures = 0 // the connection made progress: a new drop starts afresh
			}
			var apiErr *Error
			if errors.As(err, &apiErr) || ctx.Err() != nil || failures >= c.watchRetries {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield(apitype.Event{}, err)
				return
			}
			if backoff.Sleep(ctx, max(wait.Delay(failures, 0), c.watchWait/2)) != nil {
				yield(apitype.Event{}, ctx.Err())
				return
			}
			failures++
		}
	}
}

// follow reads one connection of the stream, advancing *after. ended
// reports the task's terminal event was yielded, stopped that the caller
// left the loop; otherwise err says why the connection ended.
func (c *Client) follow(ctx context.Context, id string, after *int64, yield func(apitype.Event, error) bool) (ended, stopped bool, err error) {
	req, err := c.request(ctx, http.MethodGet, taskPath(id, "/events/stream")+"?after="+strconv.FormatInt(*after, 10), nil)
	if err != nil {
		return false, false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.send(req)
	if err != nil {
		return false, false, err
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body, 0)
	for {
		msg, err := rd.Next()
		if err != nil {
			// io.EOF too: the stream ended before the task did.
			return false, false, fmt.Errorf("the event stream of task %s broke off: %w", id, err)
		}
		var ev apitype.Event
		if json.Unmarshal([]byte(msg.Data), &ev) != nil || ev.Seq <= *after {
			continue
		}
		*after = ev.Seq
		if !yield(ev, nil) {
			return false, true, nil
		}
		if ev.EndsTask() {
			return true, false, nil
		}
	}
}
