package store_test

import (
	"context"
	"testing"
	"time"

	"reasonix/runner/internal/maintenance"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// BenchmarkGCHistory measures one garbage collection pass's store part
// (maintenance.GC with [runner] retain) over 10,000 short tasks that
// finished long ago, about 11 KB of history each (the figure), on
// each database. It reports the pass's wall time and what it freed per
// task: the contents it counted and, on SQLite, the file pages it
// returned to the free list (Postgres returns them at its next vacuum).
// Run it once: go test -run '^$' -bench GCHistory -benchtime 1x.
func BenchmarkGCHistory(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) { benchGCHistory(b, open, name == store.DriverSQLite) })
	}
}

func benchGCHistory(b *testing.B, open storetest.Opener, pages bool) {
	const tasks, perTask = 10_000, 11 << 10
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		b.StopTimer()
		s := open(b, store.Config{Now: func() time.Time { return now }})
		if err := s.FillFinishedForTest(ctx, tasks, perTask, now.Add(-100*24*time.Hour)); err != nil {
			b.Fatal(err)
		}
		if !pages {
			// A live database is analysed by autovacuum; one just filled
			// in a transaction is not yet.
			if err := s.ExecForTest(ctx, "ANALYZE"); err != nil {
				b.Fatal(err)
			}
		}
		var before int64
		if pages {
			var err error
			if before, err = s.UsedBytesForTest(ctx); err != nil {
				b.Fatal(err)
			}
		}
		g := maintenance.NewGC(s, nil, maintenance.GCConfig{Now: func() time.Time { return now }})
		b.StartTimer()
		start := time.Now()
		items, err := g.Collect(ctx, maintenance.GCOpts{History: true})
		took := time.Since(start)
		b.StopTimer()
		if err != nil || len(items) != tasks {
			b.Fatalf("pass: %d items, %v", len(items), err)
		}
		var content int64
		for _, it := range items {
			content += it.Bytes
		}
		b.ReportMetric(float64(took.Milliseconds()), "ms/pass")
		b.ReportMetric(float64(content)/tasks, "content-B/task")
		if pages {
			after, err := s.UsedBytesForTest(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(before-after)/tasks, "pages-B/task")
		}
		b.ReportMetric(float64(took.Microseconds())/tasks, "µs/task")
		b.StartTimer()
	}
}

// BenchmarkGCHistoryLongTask is BenchmarkGCHistory for long tasks: 20
// tasks of 300 steps each (1,200 events, 601 messages, 300 tool calls,
// about 620 KB of history, the figure for one on Postgres). It
// reports the rows one task's prune removes and the time per task.
// Run it once: go test -run '^$' -bench GCHistoryLongTask -benchtime 1x.
func BenchmarkGCHistoryLongTask(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) {
			const tasks = 20
			ctx := context.Background()
			now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
			for b.Loop() {
				b.StopTimer()
				s := open(b, store.Config{Now: func() time.Time { return now }})
				if err := s.FillShapedForTest(ctx, tasks, 1200, 601, 300, 620<<10, now.Add(-100*24*time.Hour)); err != nil {
					b.Fatal(err)
				}
				if name != store.DriverSQLite {
					if err := s.ExecForTest(ctx, "ANALYZE"); err != nil {
						b.Fatal(err)
					}
				}
				g := maintenance.NewGC(s, nil, maintenance.GCConfig{Now: func() time.Time { return now }})
				b.StartTimer()
				start := time.Now()
				items, err := g.Collect(ctx, maintenance.GCOpts{History: true})
				took := time.Since(start)
				b.StopTimer()
				if err != nil || len(items) != tasks {
					b.Fatalf("pass: %d items, %v", len(items), err)
				}
				var rows, content int64
				for _, it := range items {
					rows += it.Rows
					content += it.Bytes
				}
				// Every fifth event is a usage event, which stays (spend is
				// read back from it).
				if rows != tasks*(2101-1200/5) {
					b.Fatalf("pruned %d rows of %d tasks, want every event but usage, every message and call", rows, tasks)
				}
				b.ReportMetric(float64(rows)/tasks, "rows/task")
				b.ReportMetric(float64(content)/tasks/1024, "content-KB/task")
				b.ReportMetric(float64(took.Microseconds())/tasks/1000, "ms/task")
				b.StartTimer()
			}
		})
	}
}
