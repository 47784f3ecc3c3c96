package runner_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// stepProvider answers a task with steps bash calls, one per request,
// then a final answer; every answer takes think.
type stepProvider struct {
	steps int
	think time.Duration
}

func (stepProvider) Name() string { return "steps" }

func (p stepProvider) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	done := 0
	for _, m := range req.Messages {
		if m.Role == agent.RoleTool {
			done++
		}
	}
	turn := agenttest.Turn{Text: "done"}
	if done < p.steps {
		turn = agenttest.Turn{ToolCalls: []agent.ToolCall{bashCall(fmt.Sprintf("s%d", done+1), fmt.Sprintf("echo step-%d >> progress.txt", done+1))}}
	}
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-time.After(p.think):
	}
	return agenttest.NewScriptedProvider(turn).Stream(ctx, req)
}

// BenchmarkNodeTasks runs 64 tasks of 5 model calls (think 200 ms each)
// and 4 bash steps on one in-process service over Postgres with 8 workers
// and the service's default intervals, and reports the wall time each
// task spent beyond its model's think time, per step, and the process's
// CPU time (its own and its children's: bash, bwrap) per task. Profile it
// with -cpuprofile to see where the service's own cost goes.
func BenchmarkNodeTasks(b *testing.B) {
	const tasks, steps = 64, 4
	think := 200 * time.Millisecond
	for b.Loop() {
		// A name for this store's connections, to find their backends.
		app := fmt.Sprintf("rxbench%d", time.Now().UnixNano())
		st, err := store.Open(context.Background(), store.Config{Driver: store.DriverPostgres,
			DSN: storetest.PostgresDSN(b) + "&application_name=" + app, Logger: storetest.Quiet()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(st.Close)
		svc := runnertest.Start(b, runnertest.Options{Store: st, Provider: stepProvider{steps: steps, think: think},
			Settings: settings(8), Configure: func(c *runner.Config) {
				// The production defaults, not runnertest's fast test ones.
				c.PollInterval, c.ControlInterval, c.SweepInterval = 0, 0, 0
			}})
		ctx := context.Background()
		cpu0, pg0 := cpuTime(), backendCPU(b, app)
		ids := make([]string, tasks)
		for i := range tasks {
			task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: fmt.Sprint("bench ", i), Posture: "auto"})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = task.ID
		}
		var extra []float64
		for _, id := range ids {
			done := runnertest.WaitState(b, svc, id, 2*time.Minute, store.StateSucceeded, store.StateFailed)
			if done.State != store.StateSucceeded {
				b.Fatalf("task %s: %s", id, done.State)
			}
			run := done.FinishedAt.Sub(done.StartedAt) - time.Duration(steps+1)*think
			extra = append(extra, float64(run.Microseconds())/1000/float64(steps+1))
		}
		cpu, pg := cpuTime()-cpu0, backendCPU(b, app)-pg0
		slices.Sort(extra)
		b.ReportMetric(extra[len(extra)/2], "ms-extra/step")
		b.ReportMetric(float64(cpu.Microseconds())/1000/tasks, "ms-cpu/task")
		b.ReportMetric(float64(pg.Microseconds())/1000/tasks, "ms-pg-cpu/task")
	}
}

// cpuTime is the CPU time of this process and its waited-for children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// backendCPU sums the CPU time of the Postgres backends serving
// connections named app (they run on this machine in the test setup).
func backendCPU(b *testing.B, app string) time.Duration {
	conn, err := pgx.Connect(context.Background(), storetest.PostgresDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), "SELECT pid FROM pg_stat_activity WHERE application_name = $1", app)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // not on this machine, or gone
		}
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
		for _, i := range []int{11, 12} { // utime, stime
			v, _ := strconv.ParseInt(f[i], 10, 64)
			total += time.Duration(v) * 10 * time.Millisecond
		}
	}
	return total
}

// BenchmarkIdleNode reports what one idle service on Postgres costs, with
// the default intervals: CPU time per second of the process and of its
// Postgres backends.
func BenchmarkIdleNode(b *testing.B) {
	for b.Loop() {
		app := fmt.Sprintf("rxidle%d", time.Now().UnixNano())
		st, err := store.Open(context.Background(), store.Config{Driver: store.DriverPostgres,
			DSN: storetest.PostgresDSN(b) + "&application_name=" + app, Logger: storetest.Quiet()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(st.Close)
		runnertest.Start(b, runnertest.Options{Store: st, Provider: stepProvider{}, Settings: settings(8), Configure: func(c *runner.Config) {
			c.PollInterval, c.ControlInterval, c.SweepInterval = 0, 0, 0
		}})
		time.Sleep(2 * time.Second)
		c0, p0 := cpuTime(), backendCPU(b, app)
		time.Sleep(10 * time.Second)
		b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/10, "ms-cpu/s")
		b.ReportMetric(float64((backendCPU(b, app)-p0).Microseconds())/1000/10, "ms-pg-cpu/s")
	}
}
