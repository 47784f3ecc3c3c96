package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// BenchmarkCountStalled measures the store's part of issue 26's stall
// sweep (the reasonix_tasks_stalled gauge at each scrape), budgeted at
// 1 ms per 100 running tasks: 100 running tasks with 20 events each, and
// 900 finished ones beside them. The relay's own check is an in-memory
// comparison per watched task.
func BenchmarkCountStalled(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s := open(b, store.Config{})
			payload := json.RawMessage(`{"step":"bash go test ./..."}`)
			for i := range 1000 {
				task, _, err := s.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Requester: "token:a", Prompt: fmt.Sprint("task ", i)}, "")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, "node", 1, nil); err != nil {
					b.Fatal(err)
				}
				for range 20 {
					if _, err := s.AppendEvent(ctx, task.ID, "step", payload); err != nil {
						b.Fatal(err)
					}
				}
				if i >= 100 {
					if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateSucceeded, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			before := time.Now().Add(time.Hour) // every running task counts as stalled
			b.ResetTimer()
			for b.Loop() {
				n, err := s.CountStalled(ctx, before)
				if err != nil || n != 100 {
					b.Fatalf("CountStalled = %d, %v; want 100", n, err)
				}
			}
		})
	}
}
