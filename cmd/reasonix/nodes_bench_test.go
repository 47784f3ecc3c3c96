package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkServeNodes runs 64 tasks of 5 model calls and 4 bash steps on
// 1, 2 and 4 `reasonix serve` processes sharing one Postgres database
// (max_concurrent_tasks 8 each), against a fake model thinking 200 ms or
// 1 s per call, and reports per size:
//
//   - tasks/s: 64 over the time from the first submission to the last
//     task's finished_at (compare sizes for the scaling ratio);
//   - ms-overhead/step: the median time the model waited between
//     answering a task and that task's next request (the service's own
//     cost per step, the bash step included);
//   - ms-cpu/task: CPU time of the serve processes and their children
//     (bash, bwrap) per task, over the run;
//   - ms-queue-to-start-p50: started_at - created_at of single tasks
//     submitted one at a time to the idle cluster afterwards.
//
// It starts real processes and takes minutes: it does not run with -short.
func BenchmarkServeNodes(b *testing.B) {
	if testing.Short() {
		b.Skip("starts several serve processes and runs 64 tasks on them")
	}
	for _, think := range []time.Duration{200 * time.Millisecond, time.Second} {
		for _, n := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("think=%s/nodes=%d", think, n), func(b *testing.B) {
				var rate, overhead, cpu, qts []float64
				for b.Loop() {
					r := runNodes(b, n, think)
					rate, overhead, cpu, qts = append(rate, r.rate), append(overhead, r.overhead), append(cpu, r.cpu), append(qts, r.qts)
				}
				b.ReportMetric(median(rate), "tasks/s")
				b.ReportMetric(median(overhead), "ms-overhead/step")
				b.ReportMetric(median(cpu), "ms-cpu/task")
				b.ReportMetric(median(qts), "ms-queue-to-start-p50")
			})
		}
	}
}

type nodesResult struct{ rate, overhead, cpu, qts float64 }

const benchTasks = 64

func runNodes(b *testing.B, n int, think time.Duration) nodesResult {
	c := newCluster(b, n, map[string]int{"bench": 4, "single": 0}, think, "\n[runner]\nmax_concurrent_tasks = 8\n")
	cpu0 := c.cpu()
	start := time.Now()
	ids := make([]string, benchTasks)
	var wg sync.WaitGroup
	for i := range benchTasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = c.live[i%n].submit(fmt.Sprintf("bench %d", i), map[string]any{"posture": "auto"})
		}()
	}
	wg.Wait()
	// Not waitState: one node takes over 40 s for 64 tasks at 1 s per call.
	deadline := time.Now().Add(10 * time.Minute)
	for _, id := range ids {
		for {
			got := c.live[0].task(id)
			if got.State == "succeeded" {
				break
			}
			if got.State != "queued" && got.State != "running" {
				b.Fatalf("task %s: %s", id, got.State)
			}
			if time.Now().After(deadline) {
				b.Fatalf("task %s still %s after 10 minutes", id, got.State)
			}
			// Seldom: each look is an API request and two queries, which
			// the nodes' and the database's CPU would count against the
			// tasks. The rate comes from finished_at, not from this.
			time.Sleep(500 * time.Millisecond)
		}
	}
	cpu := c.cpu() - cpu0
	// The run ends when its last task finished, by the store's record: the
	// polling above notices that up to 500 ms and 64 requests later, which
	// would weigh more on the larger, shorter runs.
	var end time.Time
	for _, id := range ids {
		var t struct {
			FinishedAt time.Time `json:"finished_at"`
		}
		c.live[0].call("GET", "/api/v1/tasks/"+id, nil, &t)
		if t.FinishedAt.After(end) {
			end = t.FinishedAt
		}
	}
	elapsed := end.Sub(start)

	// The model's idle time between answering a task and its next request.
	var gaps []float64
	last := map[string]time.Time{}
	for _, r := range c.nodes[0].srv.Requests() {
		prompt := ""
		for _, m := range r.Messages {
			if m.Role == "user" {
				prompt = m.Content
				break
			}
		}
		if prev, ok := last[prompt]; ok {
			gaps = append(gaps, float64(r.Received.Sub(prev).Microseconds())/1000)
		}
		last[prompt] = r.Responded
	}

	// Queue to start on the idle cluster, one task at a time.
	var waits []float64
	for i := range 20 {
		id := c.live[i%n].submit(fmt.Sprintf("single %d", i), map[string]any{"posture": "auto"})
		c.live[0].waitState(id, "succeeded")
		var t struct {
			CreatedAt time.Time `json:"created_at"`
			StartedAt time.Time `json:"started_at"`
		}
		c.live[0].call("GET", "/api/v1/tasks/"+id, nil, &t)
		waits = append(waits, float64(t.StartedAt.Sub(t.CreatedAt).Microseconds())/1000)
	}
	slices.Sort(waits)
	return nodesResult{
		rate:     benchTasks / elapsed.Seconds(),
		overhead: median(gaps),
		cpu:      float64(cpu.Milliseconds()) / benchTasks,
		qts:      median(waits),
	}
}

// cpu is the CPU time the cluster's live serve processes and their reaped
// children (bash, bwrap) have used so far.
func (c *cluster) cpu() time.Duration {
	var total time.Duration
	for _, s := range c.live {
		total += procCPU(s.cmd.Process.Pid)
	}
	return total
}

// procCPU reads utime+stime+cutime+cstime of pid from /proc (clock ticks
// of 10 ms on Linux).
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields start after its ')'.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime (fields 14-17)
		v, _ := strconv.ParseInt(fields[i], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
