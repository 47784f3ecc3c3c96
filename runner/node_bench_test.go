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

// BenchmarkStepCost measures what one step of a task costs the service on
// Postgres: 24 short tasks (4 bash steps and an answer, think 100 ms) and
// 4 long ones (20 bash steps) on one node with 8 workers and the default
// intervals. It reports the wall time a short task spent beyond its
// model's think time per step (the median task), the same for one more
// step of a long task (the difference of the medians), and, when the server has
// pg_stat_statements loaded, the statements the server ran per short task
// and per extra step of a long task (BEGIN and COMMIT count). The
// statement counts read the whole server: run it on a database nothing
// else uses.
func BenchmarkStepCost(b *testing.B) {
	const short, long, shortSteps, longSteps = 24, 4, 4, 20
	think := 100 * time.Millisecond
	for b.Loop() {
		app := fmt.Sprintf("rxstep%d", time.Now().UnixNano())
		dsn := storetest.PostgresDSN(b)
		st, err := store.Open(context.Background(), store.Config{Driver: store.DriverPostgres,
			DSN: dsn + "&application_name=" + app, Logger: storetest.Quiet()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(st.Close)
		svc := runnertest.Start(b, runnertest.Options{Store: st, Settings: settings(8),
			Provider: scriptByPrompt{"long": stepProvider{steps: longSteps, think: think}, "short": stepProvider{steps: shortSteps, think: think}},
			Configure: func(c *runner.Config) {
				c.PollInterval, c.ControlInterval, c.SweepInterval = 0, 0, 0
			}})
		ctx := context.Background()
		burst := func(prompt string, n, steps int) (float64, float64) {
			resetStatements(b)
			ids := make([]string, n)
			for i := range n {
				task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: fmt.Sprint(prompt, " ", i), Posture: "auto"})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = task.ID
			}
			// Wait by a poll of the benchmark's own, which the count
			// leaves out, rather than through Subscribe, whose reads
			// would count as the service's.
			waitFinished(b, dsn, ids)
			stmts := countStatements(b)
			if os.Getenv("REASONIX_BENCH_STATEMENTS") != "" {
				logStatements(b, prompt, n)
			}
			var extra []float64
			for _, id := range ids {
				done, err := svc.Task(ctx, id)
				if err != nil || done.State != store.StateSucceeded {
					b.Fatalf("task %s: %s %v", id, done.State, err)
				}
				run := done.FinishedAt.Sub(done.StartedAt) - time.Duration(steps+1)*think
				extra = append(extra, float64(run.Microseconds())/1000)
			}
			slices.Sort(extra)
			return extra[len(extra)/2], float64(stmts) / float64(n)
		}
		extraShort, perShort := burst("short", short, shortSteps)
		extraLong, perLong := burst("long", long, longSteps)
		// What a task spends beyond its model's think time, per step: all
		// of it for a short task (its workspace's preparation and commit
		// included), and the step's own as the long task's difference.
		b.ReportMetric(extraShort/(shortSteps+1), "ms-extra/step")
		b.ReportMetric((extraLong-extraShort)/(longSteps-shortSteps), "ms/step")
		if perShort > 0 {
			b.ReportMetric(perShort, "stmts/task")
			b.ReportMetric((perLong-perShort)/(longSteps-shortSteps), "stmts/step")
		}
	}
}

// scriptByPrompt answers each task with the provider named by its
// prompt's first word.
type scriptByPrompt map[string]stepProvider

func (scriptByPrompt) Name() string { return "by-prompt" }

func (p scriptByPrompt) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			word, _, _ := strings.Cut(m.Content, " ")
			if sp, ok := p[word]; ok {
				return sp.Stream(ctx, req)
			}
		}
	}
	return nil, fmt.Errorf("no script for this task")
}

// resetStatements clears pg_stat_statements, when the server has it.
func resetStatements(b *testing.B) {
	conn, err := pgx.Connect(context.Background(), storetest.PostgresDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	_, _ = conn.Exec(context.Background(), "SELECT public.pg_stat_statements_reset()")
}

// countStatements is how many statements the server ran since
// resetStatements, leaving out the counting's own and waitFinished's
// polls; 0 without pg_stat_statements.
func countStatements(b *testing.B) int64 {
	conn, err := pgx.Connect(context.Background(), storetest.PostgresDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int64
	err = conn.QueryRow(context.Background(), `SELECT coalesce(sum(calls), 0)::bigint FROM public.pg_stat_statements
		WHERE query NOT ILIKE '%pg_stat_statements%' AND query NOT ILIKE '%SCHEMA%'
		AND query NOT ILIKE '%rxbench-wait%'`).Scan(&n)
	if err != nil {
		return 0
	}
	return n
}

// logStatements logs the statements countStatements counts, most called
// first, as calls per task of the burst (REASONIX_BENCH_STATEMENTS=1).
func logStatements(b *testing.B, burst string, tasks int) {
	conn, err := pgx.Connect(context.Background(), storetest.PostgresDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT calls, left(regexp_replace(query, '\s+', ' ', 'g'), 110)
		FROM public.pg_stat_statements
		WHERE query NOT ILIKE '%pg_stat_statements%' AND query NOT ILIKE '%SCHEMA%'
		AND query NOT ILIKE '%rxbench-wait%' ORDER BY calls DESC`)
	if err != nil {
		return
	}
	defer rows.Close()
	var sb strings.Builder
	for rows.Next() {
		var calls int64
		var q string
		if rows.Scan(&calls, &q) == nil {
			fmt.Fprintf(&sb, "\n%7.2f  %s", float64(calls)/float64(tasks), q)
		}
	}
	fmt.Fprintf(os.Stderr, "statements per %s task:%s\n", burst, sb.String())
}

// waitFinished waits until every task of ids has succeeded or failed,
// polling the tasks table of the store at dsn on a connection of its own
// with a statement the count leaves out (rxbench-wait): waiting through
// the service (Subscribe) would add its reads to the service's count.
func waitFinished(b *testing.B, dsn string, ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var done int
		err := conn.QueryRow(ctx, `SELECT /* rxbench-wait */ count(*) FROM tasks WHERE id = ANY($1) AND state IN ($2, $3)`,
			ids, string(store.StateSucceeded), string(store.StateFailed)).Scan(&done)
		if err != nil {
			b.Fatalf("waiting for the tasks: %v", err)
		}
		if done == len(ids) {
			return
		}
		select {
		case <-ctx.Done():
			b.Fatalf("%d of %d tasks did not finish", len(ids)-done, len(ids))
		case <-tick.C:
		}
	}
}
