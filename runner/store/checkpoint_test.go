package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// testCheckpointed: a checkpoint covers exactly the calls journaled before
// it, finished or not; calls journaled after it are listed until the next
// one, and another task's calls are not touched.
func testCheckpointed(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("checkpointed"), "")
	other := mustCreate(t, s, newTask("other"), "")
	start := func(id, callID string) {
		t.Helper()
		if err := s.JournalStart(ctx, id, callID, "write_file", "h-"+callID, `{"path":"`+callID+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	lost := func(id string) []string {
		t.Helper()
		es, err := s.UncheckpointedCalls(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.CallID)
		}
		return out
	}
	start(task.ID, "c1")
	if err := s.JournalFinish(ctx, task.ID, "c1", "ok", false); err != nil {
		t.Fatal(err)
	}
	start(task.ID, "c2") // never finished: its effect, if any, is in the checkpoint too
	start(other.ID, "o1")
	if got := lost(task.ID); len(got) != 2 {
		t.Fatalf("before any checkpoint: %v, want c1 and c2", got)
	}
	if err := s.MarkCheckpointed(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if got := lost(task.ID); len(got) != 0 {
		t.Fatalf("after the checkpoint: %v, want none", got)
	}
	start(task.ID, "c3")
	if got := lost(task.ID); len(got) != 1 || got[0] != "c3" {
		t.Fatalf("after a later call: %v, want [c3]", got)
	}
	if got := lost(other.ID); len(got) != 1 || got[0] != "o1" {
		t.Fatalf("the other task: %v, want [o1]", got)
	}
}

// BenchmarkCheckpoint measures what the lost-change bookkeeping costs a
// task on each database: marking 30 journaled calls checkpointed (once per
// hand-over or task end, nothing per step) and listing the calls outside
// any checkpoint (once per worktree made anew).
func BenchmarkCheckpoint(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s := open(b, store.Config{})
			var mark, list time.Duration
			n := 0
			for b.Loop() {
				b.StopTimer()
				task, _, err := s.CreateTask(ctx, newTask("checkpoint bench"), "")
				if err != nil {
					b.Fatal(err)
				}
				for i := range 30 {
					if err := s.JournalStart(ctx, task.ID, fmt.Sprintf("%d/c", i+2), "bash", "h", `{"command":"true"}`); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				t0 := time.Now()
				if _, err := s.UncheckpointedCalls(ctx, task.ID); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := s.MarkCheckpointed(ctx, task.ID); err != nil {
					b.Fatal(err)
				}
				list, mark = list+t1.Sub(t0), mark+time.Since(t1)
				n++
			}
			b.ReportMetric(float64(mark.Microseconds())/float64(n), "mark-µs")
			b.ReportMetric(float64(list.Microseconds())/float64(n), "list-µs")
		})
	}
}
