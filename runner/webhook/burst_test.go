package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// busyModel keeps every run busy until its context ends.
type busyModel struct{}

func (busyModel) Name() string { return "busy" }

func (busyModel) Stream(ctx context.Context, _ agent.Request) (<-chan agent.Chunk, error) {
	out := make(chan agent.Chunk)
	go func() {
		defer close(out)
		<-ctx.Done()
	}()
	return out, nil
}

const (
	burstSize   = 500
	busyWorkers = 4
)

// busyService starts a fixture whose every worker runs a task that never
// ends, so deliveries are acknowledged while nothing can pick them up.
func busyService(tb testing.TB) *fixture {
	set := config.Default()
	set.Runner.MaxConcurrentTasks = busyWorkers
	// The service's own intervals, not runnertest's fast ones: four busy
	// tasks polling for cancellation every 20ms would be load no
	// production service has.
	f := startWith(tb, busyModel{}, set, func(c *runner.Config) {
		c.PollInterval, c.ControlInterval, c.SweepInterval = 0, 0, 0
	}, buildHook())
	for i := range busyWorkers {
		task, _, err := f.svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: fmt.Sprint("busy ", i), Posture: "auto"})
		if err != nil {
			tb.Fatal(err)
		}
		runnertest.WaitState(tb, f.svc, task.ID, 0, store.StateRunning)
	}
	return f
}

// burst sends burstSize signed deliveries (ids prefix-0 … prefix-499) from
// clients concurrent senders and returns each one's latency, status and
// task id, by index.
func burst(tb testing.TB, f *fixture, clients int, prefix string) ([]time.Duration, []int, []string) {
	lat := make([]time.Duration, burstSize)
	codes := make([]int, burstSize)
	ids := make([]string, burstSize)
	next := make(chan int)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				body := fmt.Appendf(nil, `{"type":"build.failed","data":{"id":"%s-%d"}}`, prefix, i)
				h := standardHeaders(fmt.Sprintf("%s-%d", prefix, i), f.now.Load(), body)
				t0 := time.Now()
				r := f.post(tb, "build", h, body)
				lat[i], codes[i] = time.Since(t0), r.status
				if id, ok := r.body["task_id"].(string); ok {
					ids[i] = id
				}
			}
		}()
	}
	for i := range burstSize {
		next <- i
	}
	close(next)
	wg.Wait()
	return lat, codes, ids
}

func percentile(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// TestWebhookBurst: 500 signed deliveries while every worker is busy are
// all acknowledged 202 with 500 distinct tasks, all stored and queued; the
// same 500 again are all duplicates of those tasks, adding none.
func TestWebhookBurst(t *testing.T) {
	f := busyService(t)
	lat, codes, ids := burst(t, f, 32, "m")
	seen := map[string]int{}
	for i, c := range codes {
		if c != http.StatusAccepted || ids[i] == "" {
			t.Fatalf("delivery %d: %d %q", i, c, ids[i])
		}
		if j, dup := seen[ids[i]]; dup {
			t.Fatalf("deliveries %d and %d share task %s", j, i, ids[i])
		}
		seen[ids[i]] = i
	}
	_, codes2, ids2 := burst(t, f, 32, "m")
	for i := range codes2 {
		if codes2[i] != http.StatusOK || ids2[i] != ids[i] {
			t.Fatalf("redelivery %d: %d %s, want 200 %s", i, codes2[i], ids2[i], ids[i])
		}
	}
	page, err := f.svc.Tasks(t.Context(), store.TaskFilter{Source: store.SourceWebhook, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	queued := 0
	for _, task := range page.Tasks {
		if _, ok := seen[task.ID]; !ok {
			t.Fatalf("unexpected task %s", task.ID)
		}
		if task.State == store.StateQueued {
			queued++
		}
	}
	if len(page.Tasks) != burstSize || page.Next != "" || queued != burstSize {
		t.Fatalf("%d webhook tasks (%d queued, more: %q), want %d", len(page.Tasks), queued, page.Next, burstSize)
	}
	t.Logf("ack latency over %d deliveries, 32 senders, %d busy workers: p50 %s p99 %s max %s",
		burstSize, busyWorkers, percentile(lat, 0.5), percentile(lat, 0.99), percentile(lat, 1))
}

// BenchmarkWebhookBurst measures the acknowledgement latency of a burst of
// 500 signed Standard Webhooks deliveries over real HTTP to a SQLite-backed
// service whose workers are all busy, from 1, 8 and 32 concurrent senders.
// One iteration is one burst; p50/p99 are over every delivery of the run.
// Under saturation the latency is queueing: SQLite has one writer, so an
// acknowledgement waits for the deliveries ahead of it. On a shared
// 2-core machine much of the tail is garbage collection competing for the
// CPU: compare a run with GOGC=off.
func BenchmarkWebhookBurst(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprint("senders=", clients), func(b *testing.B) {
			f := busyService(b)
			var all []time.Duration
			b.ResetTimer()
			for i := range b.N {
				lat, codes, _ := burst(b, f, clients, fmt.Sprint("b", i))
				for j, c := range codes {
					if c != http.StatusAccepted {
						b.Fatalf("delivery %d: %d", j, c)
					}
				}
				all = append(all, lat...)
			}
			b.StopTimer()
			b.ReportMetric(float64(percentile(all, 0.5).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(all, 0.99).Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(len(all))/b.Elapsed().Seconds(), "acks/s")
		})
	}
}
