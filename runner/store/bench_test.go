package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// BenchmarkCreateTask measures the intake transaction (dedupe key, task row
// and River job insert, committed) on each database, and reports the p99
// latency. "busy" runs it while a started queue works through the tasks,
// each of which appends events, as a loaded node would.
func BenchmarkCreateTask(b *testing.B) {
	for name, open := range storetest.Openers {
		for _, busy := range []bool{false, true} {
			label := name
			if busy {
				label += "/busy"
			}
			b.Run(label, func(b *testing.B) { benchCreate(b, open, busy) })
		}
	}
}

func benchCreate(b *testing.B, open storetest.Opener, busy bool) {
	ctx := context.Background()
	s := open(b, store.Config{})
	if busy {
		q, err := s.NewQueue(store.QueueConfig{
			MaxWorkers:   4,
			PollInterval: 50 * time.Millisecond,
			Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
				for i := range 5 {
					if _, err := s.AppendEvent(ctx, job.TaskID, "progress", fmt.Appendf(nil, `{"i":%d}`, i)); err != nil {
						return err
					}
				}
				return nil
			}),
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			_ = q.Stop(stopCtx)
		})
	}
	nt := newTask("benchmark intake")
	lat := make([]time.Duration, 0, 1024)
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, created, err := s.CreateTask(ctx, nt, fmt.Sprint("ev-", i)); err != nil || !created {
			b.Fatalf("CreateTask: created=%v err=%v", created, err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
