package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
//   - ms-pg-cpu/task: CPU time of the Postgres server per task, over the
//     run, when it runs on this machine (0 when it does not): with
//     ms-cpu/task, the whole box's cost of a task;
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
				var rate, overhead, cpu, pgCPU, qts []float64
				for b.Loop() {
					r := runNodes(b, n, think)
					rate, overhead, cpu, qts = append(rate, r.rate), append(overhead, r.overhead), append(cpu, r.cpu), append(qts, r.qts)
					pgCPU = append(pgCPU, r.pgCPU)
				}
				b.ReportMetric(median(rate), "tasks/s")
				b.ReportMetric(median(overhead), "ms-overhead/step")
				b.ReportMetric(median(cpu), "ms-cpu/task")
				b.ReportMetric(median(pgCPU), "ms-pg-cpu/task")
				b.ReportMetric(median(qts), "ms-queue-to-start-p50")
			})
		}
	}
}

type nodesResult struct{ rate, overhead, cpu, pgCPU, qts float64 }

const benchTasks = 64

func runNodes(b *testing.B, n int, think time.Duration) nodesResult {
	c := newCluster(b, n, map[string]int{"bench": 4, "single": 0}, think, "\n[runner]\nmax_concurrent_tasks = 8\n")
	pg := localPostgres(b, c.dsn)
	cpu0, pg0 := c.cpu(), pg.cpu()
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
	cpu, pgCPU := c.cpu()-cpu0, pg.cpu()-pg0
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
		pgCPU:    float64(pgCPU.Milliseconds()) / benchTasks,
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
	fields, err := statFields(pid)
	if err != nil || len(fields) < 15 {
		return 0
	}
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime (fields 14-17)
		v, _ := strconv.ParseInt(fields[i], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// statFields are the fields of /proc/<pid>/stat after the command name
// (field 3, the state, first; field 4 is the parent's pid). The name may
// hold spaces, so they start after its ')'.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 || i+2 > len(data) {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	return strings.Fields(string(data[i+2:])), nil
}

// postmaster is the local Postgres server's main process (0: the server
// is not on this machine, or not visible from here).
type postmaster int

// localPostgres finds the postmaster of the server behind dsn: the parent
// of the backend serving a connection, if this machine shows it.
func localPostgres(b testing.TB, dsn string) postmaster {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	pm, _ := statFields(backend)
	if len(pm) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(pm[1])
	return postmaster(ppid)
}

// cpu is the CPU time of the server so far: the postmaster's, its living
// children's (the backends, the WAL writer, …) and that of the children it
// reaped (backends of closed connections).
func (p postmaster) cpu() time.Duration {
	if p == 0 {
		return 0
	}
	total := procCPU(int(p))
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if f, _ := statFields(pid); len(f) > 1 && f[1] == strconv.Itoa(int(p)) {
			total += procCPU(pid)
		}
	}
	return total
}
