package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"reasonix/runner/apitype"
)

// stream serves a task's events as server-sent events: those after ?after=N
// (or the Last-Event-ID of a reconnecting client) first, then new ones as
// they are appended. Each event's id is its sequence number, so a client
// that reconnects resumes exactly where it stopped. Comments keep idle
// connections alive through proxies. A token holds at most
// MaxStreamsPerToken streams at once; the slot frees when the stream ends.
func (a *API) stream(w http.ResponseWriter, r *http.Request) {
	after, ok := afterParam(w, r)
	if !ok {
		return
	}
	release, ok := a.streams.acquire(r)
	if !ok {
		w.Header().Set("Retry-After", streamRetryAfter)
		writeError(w, http.StatusTooManyRequests, apitype.CodeTooManyStreams,
			fmt.Sprintf("this token already has %d event streams open; close one or retry later", a.streams.max))
		return
	}
	defer release()
	ctx := r.Context()
	events, err := a.svc.Subscribe(ctx, r.PathValue("id"), after)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	// The server's WriteTimeout would cut a long stream; each write below
	// extends the deadline instead.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	keep := time.NewTicker(a.keepAlive)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-keep.C:
			_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case ev, ok := <-events:
			if !ok {
				return
			}
			data, err := json.Marshal(viewEvent(ev))
			if err != nil {
				return
			}
			_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, sseSafe(ev.Type), data); err != nil {
				return
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// sseSafe keeps an event type on one line (types are ours, but a newline
// would break the framing).
func sseSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}
