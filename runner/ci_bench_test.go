package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
	"reasonix/runner/store"
)

// BenchmarkCIWakeToRunning measures what issue 25 budgets at 100 ms p50:
// from a check webhook on a red commit (WakeCI, what the delivery
// calls) to the task running again with the failure — the job woken, the
// forge asked for checks and logs, the message posted, the task requeued
// and claimed. Each iteration parks a fresh task first, off the clock.
// "parked" wakes a job River has recorded as snoozed, as a check result
// minutes later does; "racing" wakes it right after the task parked, while
// River may still hold the job as running (a decision clicked at once):
// River's batch completer records a lone snooze up to 250 ms after the
// handler returned, so such a wake supersedes the parked job instead of
// waiting for that record (runner/store/park.go).
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

// BenchmarkCIWaitingHoldsNothing measures what issue 25 budgets: tasks
// parked waiting for CI hold no worker and ≤ 10 MB more RSS than none. It
// parks one task to warm the service up, measures, parks n more (500, or
// REASONIX_BENCH_WAITING) and measures again: jobs running, goroutines,
// live heap after a collection and the process's RSS. The fake forge and
// its git server live in the same process and grow with the PRs they
// keep (the fake model's request log is dropped first), so the heap and
// RSS deltas are an upper bound; REASONIX_BENCH_HEAPPROFILE=FILE writes
// the live heap at the second measurement, to tell the two apart. Run
// with -benchtime=1x.
func BenchmarkCIWaitingHoldsNothing(b *testing.B) {
	n := 500
	if v, err := strconv.Atoi(os.Getenv("REASONIX_BENCH_WAITING")); err == nil && v > 0 {
		n = v
	}
	rt := newRouter()
	bench := newCIBench(b, rt, 1, time.Hour)
	park := func(i int) string {
		prompt := fmt.Sprintf("add readme %d", i)
		rt.script(prompt, calls(call("c1", "write_file", map[string]string{"path": "README.md", "content": prompt})), answer("Added it."))
		task, _, err := bench.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: prompt, Workspace: "app", Posture: "auto"})
		if err != nil {
			b.Fatal(err)
		}
		return task.ID
	}
	// Tasks of one workspace take turns in no set order, so wait for all
	// of them at once, allowing each its share of the time.
	settled := func(ids []string) {
		eventually.True(b, time.Duration(len(ids))*10*time.Second, func() bool {
			for _, id := range ids {
				t, err := bench.svc.Task(context.Background(), id)
				if err != nil {
					b.Fatal(err)
				}
				if t.State.Terminal() {
					b.Fatalf("task %s ended %s before CI: %+v", id, t.State, t.Result)
				}
				if t.State != store.StateWaitingCI {
					return false
				}
				if running, err := bench.st.JobRunning(context.Background(), id); err != nil || running {
					return false
				}
			}
			return true
		}, "every task parked waiting for CI")
	}
	measure := func() (heap, rss uint64, goroutines int) {
		runtime.GC()
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, vmRSS(b), runtime.NumGoroutine()
	}
	// The fake model keeps every request it got (tool schemas included)
	// for tests to read; parked tasks ask it nothing more, so its scripts
	// are dropped before each measurement, leaving the service's share.
	forget := func() {
		rt.mu.Lock()
		clear(rt.scripts)
		rt.mu.Unlock()
	}
	settled([]string{park(-1)})
	forget()
	heap0, rss0, g0 := measure()
	b.ResetTimer()
	ids := make([]string, 0, n)
	for i := range n {
		ids = append(ids, park(i))
	}
	settled(ids)
	b.StopTimer()
	forget()
	heap1, rss1, g1 := measure()
	if path := os.Getenv("REASONIX_BENCH_HEAPPROFILE"); path != "" {
		// What the waiting tasks hold, by allocation site: the service's
		// share against the fakes' share of the deltas above.
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	running := 0
	for _, id := range ids {
		if r, _ := bench.st.JobRunning(context.Background(), id); r {
			running++
		}
	}
	b.ReportMetric(float64(running), "jobs-running")
	b.ReportMetric(float64(g1-g0), "goroutines-delta")
	b.ReportMetric((float64(heap1)-float64(heap0))/(1<<20), "heap-MB-delta")
	b.ReportMetric((float64(rss1)-float64(rss0))/(1<<20), "rss-MB-delta")
	b.Logf("%d tasks waiting for CI: heap %d → %d KiB, RSS %d → %d KiB, goroutines %d → %d",
		n, heap0>>10, heap1>>10, rss0>>10, rss1>>10, g0, g1)
}

// vmRSS is the process's resident set in bytes, from /proc.
func vmRSS(b *testing.B) uint64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	for line := range strings.Lines(string(raw)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}
