package relay

import (
	"context"
	"strconv"
	"time"

	"reasonix/runner"
)

// A task from the API, a schedule or a webhook that names a chat notify
// target is found by the relay's scan, which lists live tasks: one that
// ends between two scans (a quick answer, a refusal at the first call) or
// while no relay runs would never be posted. So the scan also looks at
// the tasks that ended within endedWithin, and relays each that was not
// relayed to its end: the watcher replays its log, posting what is
// missing (its status, its report) and nothing it posted before (every
// post has its key), then records that the end was relayed, under the
// end's time, so a task continued and ended again is relayed again.

// endedWithin is how far back the scan looks for ended tasks: a relay
// down for longer does not flood a channel with old reports on its
// return.
const endedWithin = 24 * time.Hour

// endedBatch bounds the ended tasks one scan lists, newest first.
const endedBatch = 100

var terminalStates = []runner.State{runner.StateSucceeded, runner.StateFailed, runner.StateBlocked,
	runner.StateCancelled, runner.StateInterrupted, runner.StateBudgetExhausted}

// endKey is the store key recording that task's end at finished was
// relayed.
func endKey(finished time.Time) string {
	return "end:" + strconv.FormatInt(finished.UnixMicro(), 10)
}

// scanEnded starts a watcher for every recently ended task with a chat
// target whose end was not relayed.
func (r *Relay) scanEnded(ctx context.Context) {
	page, err := r.svc.Tasks(ctx, runner.TaskFilter{States: terminalStates, Limit: endedBatch})
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("relay: listing ended tasks", "err", err)
		}
		return
	}
	since := r.now().Add(-endedWithin)
	for _, t := range page.Tasks {
		if t.FinishedAt.IsZero() || t.FinishedAt.Before(since) {
			continue
		}
		key := t.ID + "/" + endKey(t.FinishedAt)
		if r.endRelayed(key) {
			continue
		}
		var target *runner.NotifyTarget
		for _, n := range t.Notify {
			if _, ok := r.transports[n.Transport]; ok {
				target = &n
				break
			}
		}
		if target == nil {
			r.markEndRelayed(key) // nothing this node relays
			continue
		}
		if _, err := r.st.ChatPost(ctx, t.ID, endKey(t.FinishedAt)); err == nil {
			r.markEndRelayed(key)
			continue
		}
		r.watch(t.ID, *target)
	}
}

func (r *Relay) endRelayed(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended[key]
}

// markEndRelayed remembers that key's end was relayed, so the scan asks
// the store once per task. The memory is bounded: past 10,000 ends it
// forgets them all, and the store answers again.
func (r *Relay) markEndRelayed(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended == nil || len(r.ended) > 10000 {
		r.ended = map[string]bool{}
	}
	r.ended[key] = true
}

// recordEnd records that the watcher relayed its task to its end.
func (w *watcher) recordEnd(ctx context.Context) {
	r := w.r
	t, err := r.svc.Task(ctx, w.v.taskID)
	if err != nil || !t.State.Terminal() || t.FinishedAt.IsZero() {
		return
	}
	post := runner.ChatPost{TaskID: t.ID, Key: endKey(t.FinishedAt), Transport: w.t.Name(), Channel: w.target.Channel, MessageID: w.status}
	if err := r.st.SaveChatPost(context.WithoutCancel(ctx), post); err != nil {
		r.log.Warn("relay: recording a task's end relayed", "task", t.ID, "err", err)
		return
	}
	r.markEndRelayed(t.ID + "/" + endKey(t.FinishedAt))
}
