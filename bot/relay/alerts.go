package relay

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"reasonix/bot"
	"reasonix/runner"
)

// A schedule that goes quiet is worse than one that fails loudly: the
// scan looks at the schedules too, and one that paused itself after
// max_failures failed runs, whose last runs failed (failingAfter in a
// row, before it pauses), whose run is late (runner.HealthLate: due and
// not started), or that dropped an occurrence for being late (catch_up
// none, after the service was down) is announced once — in the channel of
// its last run's notify target and in [bot] alerts_channel when that names
// a channel of an enabled transport. The announcement is recorded under
// the last run's task, so it is made once per failed run, late occurrence
// or drop since the last run, not once per scan; a schedule that never ran has no
// task to record it under and no notify target to post to, and is left
// to the metrics. Two nodes scanning at the same moment may both make it
// (rare, and harmless next to saying nothing).

// failingAfter is how many failed runs in a row make a schedule failing.
const failingAfter = 2

// scanSchedules announces paused and failing schedules.
func (r *Relay) scanSchedules(ctx context.Context) {
	list, err := r.svc.Schedules(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("relay: listing schedules", "err", err)
		}
		return
	}
	for _, s := range list {
		if s.LastTaskID == "" {
			continue
		}
		var key, text string
		switch {
		case s.Paused && s.PausedReason != "":
			key = "alert:paused"
			text = fmt.Sprintf("⏸ Schedule %s is %s. It will not run again until someone resumes it: reasonix schedules resume %s", s.Name, s.PausedReason, s.Name)
		case !s.Paused && s.Failures >= failingAfter:
			key = "alert:failing"
			text = fmt.Sprintf("⚠️ Schedule %s failed its last %d runs (the last: task %s, %s). After %d it pauses itself.", s.Name, s.Failures, s.LastTaskID, s.LastOutcome, s.MaxFailures)
		case s.Health == runner.HealthLate:
			key = "alert:late:" + strconv.FormatInt(s.Next.Unix(), 10)
			text = fmt.Sprintf("⏰ Schedule %s did not run when due: %s. Check that a reasonix serve is up: reasonix nodes", s.Name, s.HealthReason)
		case s.LastMissedAt.After(s.LastRunAt): // dropped since the last run
			key = "alert:missed:" + strconv.FormatInt(s.LastMissedAt.Unix(), 10)
			text = fmt.Sprintf("⏰ Schedule %s did not run when due (%s): no node was up to start it in time, and catch_up = %q drops a late run. Its next run: %s.",
				s.Name, s.LastMissedAt.UTC().Format("2006-01-02 15:04 MST"), s.CatchUp, s.Next.UTC().Format("2006-01-02 15:04 MST"))
		default:
			continue
		}
		if _, err := r.st.ChatPost(ctx, s.LastTaskID, key); !errors.Is(err, runner.ErrRecordNotFound) {
			continue // announced (or the store cannot say: say nothing rather than twice)
		}
		r.alert(ctx, s.LastTaskID, key, text)
	}
}

// alert posts text in the channel of task taskID's notify target and in
// the alerts channel, and records it under key.
func (r *Relay) alert(ctx context.Context, taskID, key, text string) {
	task, err := r.svc.Task(ctx, taskID)
	if err != nil {
		return
	}
	type place struct {
		t       bot.Transport
		channel string
	}
	var places []place
	for _, n := range task.Notify {
		if t, ok := r.transports[n.Transport]; ok {
			places = append(places, place{t, n.Channel})
			break
		}
	}
	for name, t := range r.transports {
		if ch := r.cfg.Bot.AlertsChannelOf(name); ch != "" && (len(places) == 0 || places[0].channel != ch) {
			places = append(places, place{t, ch})
		}
	}
	var first *runner.ChatPost
	for _, p := range places {
		id, err := r.post(ctx, p.t, bot.Message{Channel: p.channel, Text: p.t.Format().Escape(r.redact.String(text))})
		if err != nil {
			r.log.Warn("relay: posting a schedule alert", "task", taskID, "channel", p.channel, "err", err)
			continue
		}
		if first == nil {
			first = &runner.ChatPost{TaskID: taskID, Key: key, Transport: p.t.Name(), Channel: p.channel, MessageID: id}
		}
	}
	if first == nil {
		return
	}
	if err := r.st.SaveChatPost(context.WithoutCancel(ctx), *first); err != nil {
		r.log.Warn("relay: recording a schedule alert", "task", taskID, "err", err)
	}
}
