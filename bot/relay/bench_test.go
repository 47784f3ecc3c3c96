package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot/bottest"
	"reasonix/config"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// The speed targets, at the relay's DEFAULT pacing (one write per
// second per channel) against a fake Slack that enforces Slack's own
// sustained limit (1 write/s per channel, burst 3). Run with
//
//	go test -run '^$' -bench Relay -benchtime 20x -count 5 ./bot/relay
//
// and read the custom metrics; each benchmark reports its distribution,
// not ns/op (which is the wall time of a whole scenario).

// slackLimits is Slack's documented sustained rate for chat writes.
var slackLimits = bottest.SlackLimits{PerSecond: 1, Burst: 3}

var markRE = regexp.MustCompile(`mark-(\d+)`)

// BenchmarkRelayEventToEdit: plan events arrive three times a second —
// faster than the channel may be edited — and each must become visible in
// the status message (itself or a later one, coalesced). Metric: p50 and
// p99 of append → visible.
func BenchmarkRelayEventToEdit(b *testing.B) {
	r := newRigOpts(b, rigOpts{model: approvalScript, limits: slackLimits})
	m := r.slack.Mention(alice, channel, "", "watch my plan")
	id := r.taskOf(b, m.TS)
	r.approvalMessage(b, m.TS) // the task now waits; only our events move it
	ctx := context.Background()
	appended := make([]time.Time, b.N)
	seen := make([]time.Duration, b.N)
	var mu sync.Mutex
	done := make(chan struct{})
	go func() { // the reader: what a person watching the message sees
		defer close(done)
		next := 0
		for next < b.N {
			msgs := r.slack.Thread(channel, m.TS)
			if len(msgs) > 0 {
				if sm := markRE.FindStringSubmatch(msgs[0].Text); sm != nil {
					n, _ := strconv.Atoi(sm[1])
					mu.Lock()
					for ; next <= n && next < b.N; next++ {
						seen[next] = msgs[0].Edited.Sub(appended[next])
					}
					mu.Unlock()
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	b.ResetTimer()
	for i := range b.N {
		plan, _ := json.Marshal(map[string]any{"plan": []map[string]string{{"content": fmt.Sprintf("mark-%d", i), "status": "in_progress"}}})
		mu.Lock()
		appended[i] = time.Now()
		mu.Unlock()
		if _, err := r.st.AppendEvent(ctx, id, "plan_updated", plan); err != nil {
			b.Fatal(err)
		}
		time.Sleep(333 * time.Millisecond)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		b.Fatal("the last event never became visible")
	}
	b.StopTimer()
	b.ReportMetric(percentile(seen, 0.5).Seconds()*1000, "p50-ms")
	b.ReportMetric(percentile(seen, 0.99).Seconds()*1000, "p99-ms")
	b.ReportMetric(float64(r.slack.Violations()), "violations")
}

// BenchmarkRelayFinalReport: a task that ends at once, started from a DM
// (its own channel, so iterations do not share a pacing slot). Metric: the
// task's terminal event → its report posted.
func BenchmarkRelayFinalReport(b *testing.B) {
	r := newRigOpts(b, rigOpts{limits: slackLimits, model: func(agenttest.Request) agenttest.Turn {
		return agenttest.Turn{Text: "finished-bench"}
	}})
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ch := fmt.Sprintf("DREP%04d", i)
		m := r.slack.DM(alice, ch, "report quickly")
		id := r.taskOfIn(b, ch, m.TS)
		task := runnertest.WaitState(b, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed)
		if task.State != store.StateSucceeded {
			b.Fatalf("task %s: %+v", id, task.Result)
		}
		var posted time.Time
		eventually(b, "the report", func() bool {
			for _, msg := range r.slack.Thread(ch, m.TS) {
				if strings.Contains(msg.Text, "finished-bench") {
					posted = msg.Posted
					return true
				}
			}
			return false
		})
		ends := runnertest.Events(b, r.svc, id, "task_state")
		lat = append(lat, posted.Sub(ends[len(ends)-1].Time))
	}
	b.StopTimer()
	b.ReportMetric(percentile(lat, 0.5).Seconds()*1000, "p50-ms")
	b.ReportMetric(percentile(lat, 1).Seconds()*1000, "max-ms")
	b.ReportMetric(float64(r.slack.Violations()), "violations")
}

// BenchmarkRelayEnvelopeAck: every worker is busy — the runner's only one
// with a long task, and the relay's handlers, each stuck on a Slack that
// takes half a second per write — while b.N DMs arrive back to back, each
// to become a queued task. An envelope is acknowledged once its DM is
// recorded in the store, before it is handled. Metric: envelope sent →
// ack received by the fake Socket Mode server.
func BenchmarkRelayEnvelopeAck(b *testing.B) {
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 1
	busy := agenttest.Delayed(10*time.Second, agenttest.Turn{Text: "slow"})
	r := newRigOpts(b, rigOpts{set: set, limits: slackLimits, model: func(req agenttest.Request) agenttest.Turn {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "occupy") {
			return busy
		}
		return agenttest.Turn{Text: "ok"}
	}})
	first := r.slack.Mention(alice, channel, "", "occupy the only worker")
	occupied := r.taskOf(b, first.TS)
	runnertest.WaitState(b, r.svc, occupied, 10*time.Second, store.StateRunning)
	r.slack.Slow(500 * time.Millisecond)
	defer r.slack.Slow(0) // let the backlog drain before cleanup
	b.ResetTimer()
	for i := range b.N {
		r.slack.DM(alice, fmt.Sprintf("DACK%04d", i), "queued behind the busy worker")
	}
	eventually(b, "every acknowledgement", func() bool { return len(r.slack.AckLatencies()) >= b.N+1 })
	b.StopTimer()
	var acks []time.Duration
	for _, d := range r.slack.AckLatencies() {
		acks = append(acks, d)
	}
	b.ReportMetric(percentile(acks, 0.5).Seconds()*1000, "p50-ms")
	b.ReportMetric(percentile(acks, 0.99).Seconds()*1000, "p99-ms")
}

// BenchmarkRelayBurst: per iteration one task logs 1,000 events within
// about a second. Metrics: zero writes the fake refused, the last event
// visible after the burst, and the heap before and after (after a GC) —
// flat means the relay keeps no per-event memory.
func BenchmarkRelayBurst(b *testing.B) {
	r := newRigOpts(b, rigOpts{model: approvalScript, limits: slackLimits})
	m := r.slack.Mention(alice, channel, "", "burst")
	r.approvalMessage(b, m.TS)
	id := r.taskOf(b, m.TS)
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var tails, rates []time.Duration
	b.ResetTimer()
	for it := range b.N {
		start := time.Now()
		for i := range 1000 {
			// Paced to 1,000 events/s: the next event is due at start+i ms.
			if d := time.Until(start.Add(time.Duration(i) * time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
			plan, _ := json.Marshal(map[string]any{"plan": []map[string]string{{"content": fmt.Sprintf("burst-%d-%04d", it, i), "status": "in_progress"}}})
			if _, err := r.st.AppendEvent(ctx, id, "plan_updated", plan); err != nil {
				b.Fatal(err)
			}
		}
		last := time.Now()
		rates = append(rates, last.Sub(start))
		want := fmt.Sprintf("burst-%d-0999", it)
		eventually(b, want, func() bool {
			msgs := r.slack.Thread(channel, m.TS)
			return len(msgs) > 0 && strings.Contains(msgs[0].Text, want)
		})
		tails = append(tails, time.Since(last))
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(r.slack.Violations()), "violations")
	b.ReportMetric(percentile(rates, 0.5).Seconds()*1000, "burst-ms")
	b.ReportMetric(percentile(tails, 0.5).Seconds()*1000, "last-visible-ms")
	b.ReportMetric(float64(before.HeapInuse>>10), "heap-before-KiB")
	b.ReportMetric(float64(after.HeapInuse>>10), "heap-after-KiB")
	if n := r.slack.Violations(); n != 0 {
		b.Errorf("%d writes refused by the fake's limits", n)
	}
}

// percentile is the p-quantile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}
