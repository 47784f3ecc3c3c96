package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"reasonix/internal/eventually"
	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
)

// BenchmarkCIWakeToRunning measures what issue 25 budgets at 100 ms p50:
// from a check webhook on a red commit (WakeCI, what the delivery
// calls) to the task running again with the failure — the job woken, the
// forge asked for checks and logs, the message posted, the task requeued
// and claimed. Each iteration parks a fresh task first, off the clock.
// "parked" wakes a job River has recorded as snoozed, as a check result
// minutes later does; "racing" wakes it right after the task parked, while
// River may still hold the job as running (a decision clicked at once).
// Run with -benchtime=20x; it reports the median and the worst.
func BenchmarkCIWakeToRunning(b *testing.B) {
	b.Run("parked", func(b *testing.B) { benchCIWake(b, true) })
	b.Run("racing", func(b *testing.B) { benchCIWake(b, false) })
}

func benchCIWake(b *testing.B, parked bool) {
	rt := newRouter()
	bench := newCIBench(b, rt, 1, time.Hour)
	var samples []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		prompt := fmt.Sprintf("add readme %d", i)
		rt.script(prompt,
			calls(call("c1", "write_file", map[string]string{"path": "README.md", "content": prompt})),
			answer("Added it."), answer("Could not fix it."))
		task, sha := bench.submit(b, prompt)
		bench.srv.SetChecks(sha, forgetest.Check{Name: "test", State: forge.CIFailure, Log: "--- FAIL: TestX"})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		evs, err := bench.svc.Subscribe(ctx, task.ID, 0)
		if err != nil {
			b.Fatal(err)
		}
		var last int64
		for ev := range evs { // drain what is stored: the wake comes after
			if last = ev.Seq; ev.Type == "ci_updated" {
				break
			}
		}
		if parked {
			eventually.True(b, 0, func() bool {
				running, err := bench.st.JobRunning(context.Background(), task.ID)
				return err == nil && !running
			}, "River records the parked job's snooze")
		}
		b.StartTimer()
		start := time.Now()
		bench.wake(b, bench.svc, sha)
		running := false
		for ev := range evs {
			if ev.Seq > last && testing.Verbose() {
				b.Logf("+%s %s %s", ev.Time.Sub(start), ev.Type, ev.Payload)
			}
			if ev.Seq <= last || ev.Type != "task_state" {
				continue
			}
			var p struct{ State string }
			_ = json.Unmarshal(ev.Payload, &p)
			if p.State == "running" {
				running = true
				break
			}
		}
		samples = append(samples, time.Since(start))
		cancel()
		if !running {
			b.Fatalf("task %s did not run again after the wake", task.ID)
		}
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(samples[len(samples)-1].Microseconds())/1000, "ms-max")
}
