package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// blockingProvider keeps every run busy until its context ends.
type blockingProvider struct{}

func (blockingProvider) Name() string { return "blocking" }

func (blockingProvider) Stream(ctx context.Context, _ agent.Request) (<-chan agent.Chunk, error) {
	out := make(chan agent.Chunk)
	go func() {
		defer close(out)
		<-ctx.Done()
	}()
	return out, nil
}

// BenchmarkIntakeBusy measures POST /api/v1/tasks through the real handler
// while every worker is busy: p99 latency and throughput (tasks/s) with 8
// concurrent clients.
func BenchmarkIntakeBusy(b *testing.B) {
	for _, name := range []string{store.DriverSQLite, store.DriverPostgres} {
		b.Run(name, func(b *testing.B) {
			st := storetest.Openers[name](b, store.Config{})
			svc := runnertest.Start(b, runnertest.Options{Store: st, Provider: blockingProvider{},
				Settings: settings(4), Configure: func(c *runner.Config) { c.PollInterval = 0; c.ControlInterval = time.Second }})
			ctx := context.Background()
			if _, err := st.RegisterBootstrapToken(ctx, store.BootstrapName, "t"); err != nil {
				b.Fatal(err)
			}
			for i := range 4 {
				task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: fmt.Sprint("busy ", i), Posture: "auto"})
				if err != nil {
					b.Fatal(err)
				}
				runnertest.WaitState(b, svc, task.ID, 0, store.StateRunning)
			}
			api, err := httpapi.New(httpapi.Config{Service: svc})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(api)
			defer srv.Close()
			client := srv.Client()
			var mu sync.Mutex
			var lat []time.Duration
			b.SetParallelism(4) // 4 x GOMAXPROCS(2) = 8 clients
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				var mine []time.Duration
				for pb.Next() {
					t0 := time.Now()
					req, _ := http.NewRequest("POST", srv.URL+"/api/v1/tasks", strings.NewReader(`{"prompt":"intake benchmark","posture":"auto"}`))
					req.Header.Set("Authorization", "Bearer t")
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					var buf bytes.Buffer
					_, _ = buf.ReadFrom(res.Body)
					res.Body.Close()
					if res.StatusCode != 202 {
						b.Errorf("status %d: %s", res.StatusCode, buf.String())
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "tasks/s")
			}
		})
	}
}

// BenchmarkQueueToStart measures the time from a committed intake to a
// worker claiming the task on an idle service (StartedAt - CreatedAt).
func BenchmarkQueueToStart(b *testing.B) {
	for _, name := range []string{store.DriverSQLite, store.DriverPostgres} {
		b.Run(name, func(b *testing.B) {
			svc := runnertest.Start(b, runnertest.Options{Open: storetest.Openers[name], Provider: echoProvider{},
				Settings: settings(4), Configure: func(c *runner.Config) { c.PollInterval = 0; c.ControlInterval = time.Second }})
			ctx := context.Background()
			var lat []time.Duration
			for b.Loop() {
				task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "quick", Posture: "auto"})
				if err != nil {
					b.Fatal(err)
				}
				done := runnertest.WaitState(b, svc, task.ID, 0, store.StateSucceeded, store.StateFailed)
				lat = append(lat, done.StartedAt.Sub(done.CreatedAt))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}

// BenchmarkParkedApprovals parks 1,000 tasks on approvals and reports the
// heap and RSS they add; a further task then runs on the single worker,
// proving that none is held. Run it with -benchtime=1x.
func BenchmarkParkedApprovals(b *testing.B) {
	const parked = 1000
	for b.Loop() {
		set := config.Default()
		set.Runner.MaxConcurrentTasks = 4
		svc := runnertest.Start(b, runnertest.Options{Provider: parkProvider{}, Settings: set,
			Configure: func(c *runner.Config) { c.ControlInterval = time.Second; c.PollInterval = 10 * time.Millisecond }})
		ctx := context.Background()
		// Warm up: one task through the whole path.
		warm, _, _ := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:x", Prompt: "park warm"})
		runnertest.WaitState(b, svc, warm.ID, 30*time.Second, store.StateWaitingApproval)
		heap0, rss0 := memory()
		ids := make([]string, parked)
		for i := range parked {
			task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:x", Prompt: fmt.Sprint("park ", i)})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = task.ID
		}
		for _, id := range ids {
			runnertest.WaitState(b, svc, id, 120*time.Second, store.StateWaitingApproval)
		}
		heap1, rss1 := memory()
		b.ReportMetric(float64(heap1-heap0)/(1<<20), "heap-MB")
		b.ReportMetric(float64(rss1-rss0)/(1<<20), "rss-MB")
		free, _, _ := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "free worker", Posture: "auto"})
		if done := runnertest.WaitState(b, svc, free.ID, 30*time.Second, store.StateSucceeded, store.StateFailed); done.State != store.StateSucceeded {
			b.Fatalf("a task after %d parked ones: %s", parked, done.State)
		}
	}
}

// parkProvider asks for a shell command (which needs an approval) on the
// first turn and answers on later ones.
type parkProvider struct{}

func (parkProvider) Name() string { return "park" }

func (parkProvider) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	turn := agenttest.Turn{Text: "ok"}
	if len(req.Messages) <= 2 && !strings.HasPrefix(lastUser(req.Messages), "free") {
		turn = agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"make deploy"}`}}}
	}
	return agenttest.NewScriptedProvider(turn).Stream(ctx, req)
}

func lastUser(msgs []agent.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// memory returns the live heap and the resident set size after a GC.
func memory() (heap, rss int64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			rss = kb << 10
		}
	}
	return int64(ms.HeapInuse), rss
}
