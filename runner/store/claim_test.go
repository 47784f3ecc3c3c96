package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// claimAll claims every task at once, each from its own goroutine as
// workers of several nodes would, and returns the ids that won.
func claimAll(t *testing.T, stores []*store.Store, tasks []store.Task, limit int) []string {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []string
	for i, task := range tasks {
		s := stores[i%len(stores)]
		wg.Go(func() {
			announce := func(c store.Task) []store.EventInput {
				return []store.EventInput{{Type: "claimed"}}
			}
			_, err := s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, fmt.Sprint("node-", i), limit, announce)
			switch {
			case err == nil:
				mu.Lock()
				won = append(won, task.ID)
				mu.Unlock()
			case errors.Is(err, store.ErrWorkspaceBusy):
			default:
				t.Errorf("ClaimTask: %v", err)
			}
		})
	}
	wg.Wait()
	return won
}

// testClaimWorkspace: of more tasks of one workspace than limit claimed
// at once, exactly limit run; a claim refused as busy changes nothing and
// writes no event; tasks of another workspace or none are not held back;
// once a running one ends, one more claim succeeds and the next is busy
// again.
func testClaimWorkspace(t *testing.T, open storetest.Opener, limit int) {
	ctx := context.Background()
	s := open(t, store.Config{})
	var same []store.Task
	for i := range limit + 4 {
		same = append(same, mustCreate(t, s, newTask(fmt.Sprint("same ", i)), ""))
	}
	other := newTask("other")
	other.Workspace = "other-repo"
	scratch := newTask("scratch")
	scratch.Workspace = ""
	ot, st := mustCreate(t, s, other, ""), mustCreate(t, s, scratch, "")

	won := claimAll(t, []*store.Store{s}, same, limit)
	if len(won) != limit {
		t.Fatalf("%d tasks of one workspace claimed at once, want %d", len(won), limit)
	}
	running := map[string]bool{}
	for _, id := range won {
		running[id] = true
	}
	var waiting []string
	for _, task := range same {
		got, err := s.Task(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Events(ctx, task.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if running[task.ID] {
			if got.State != store.StateRunning || got.Attempt != 1 || len(evs) != 1 {
				t.Errorf("claimed task: state %s attempt %d, %d events; want running, 1, 1", got.State, got.Attempt, len(evs))
			}
			continue
		}
		waiting = append(waiting, task.ID)
		if got.State != store.StateQueued || got.Attempt != 0 || got.LeaseOwner != "" || len(evs) != 0 {
			t.Errorf("busy task changed: state %s attempt %d owner %q, %d events", got.State, got.Attempt, got.LeaseOwner, len(evs))
		}
	}
	if _, err := s.ClaimTask(ctx, waiting[0], []store.State{store.StateQueued}, "node-z", limit, nil); !errors.Is(err, store.ErrWorkspaceBusy) {
		t.Errorf("claim while %d run = %v, want ErrWorkspaceBusy", limit, err)
	}
	for _, id := range []string{ot.ID, st.ID} {
		if _, err := s.ClaimTask(ctx, id, []store.State{store.StateQueued}, "node-x", limit, nil); err != nil {
			t.Errorf("a task of another workspace (or none) was held back: %v", err)
		}
	}

	// A claim from the wrong state is a conflict, not busy; a missing
	// task is not found.
	if _, err := s.ClaimTask(ctx, won[0], []store.State{store.StateQueued}, "node-x", limit+1, nil); !errors.Is(err, store.ErrStateConflict) {
		t.Errorf("claim of a running task = %v, want ErrStateConflict", err)
	}
	if _, err := s.ClaimTask(ctx, "nope", []store.State{store.StateQueued}, "node-x", limit, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("claim of a missing task = %v, want ErrNotFound", err)
	}

	if _, err := s.SetTaskState(ctx, won[0], []store.State{store.StateRunning}, store.StateSucceeded, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClaimTask(ctx, waiting[0], []store.State{store.StateQueued}, "node-y", limit, nil)
	if err != nil || got.State != store.StateRunning || got.LeaseOwner != "node-y" || got.Attempt != 1 {
		t.Fatalf("claim after one ended: %+v, %v", got, err)
	}
	if _, err := s.ClaimTask(ctx, waiting[1], []store.State{store.StateQueued}, "node-y", limit, nil); !errors.Is(err, store.ErrWorkspaceBusy) {
		t.Errorf("claim past the limit again = %v, want ErrWorkspaceBusy", err)
	}
	// A node that allows more takes one more.
	if _, err := s.ClaimTask(ctx, waiting[1], []store.State{store.StateQueued}, "node-w", limit+1, nil); err != nil {
		t.Errorf("claim under a higher limit: %v", err)
	}
}

// TestClaimWorkspaceAcrossNodes: four nodes sharing one Postgres claim
// twelve tasks of one workspace at once, twice over; exactly the limit
// run each time.
func TestClaimWorkspaceAcrossNodes(t *testing.T) {
	opener := storetest.SharedPostgres(t)
	var nodes []*store.Store
	for range 4 {
		nodes = append(nodes, opener())
	}
	ctx := context.Background()
	const limit = 3
	for round := range 2 {
		var tasks []store.Task
		for i := range 12 {
			tasks = append(tasks, mustCreate(t, nodes[0], newTask(fmt.Sprint("round ", round, " task ", i)), ""))
		}
		won := claimAll(t, nodes, tasks, limit)
		if len(won) != limit {
			t.Fatalf("round %d: %d tasks claimed across nodes, want %d", round, len(won), limit)
		}
		for _, id := range won {
			if _, err := nodes[1].SetTaskState(ctx, id, []store.State{store.StateRunning}, store.StateSucceeded, nil); err != nil {
				t.Fatal(err)
			}
		}
		// The losers of this round are left queued; the next round's
		// tasks compete only with each other.
		for _, task := range tasks {
			if _, err := nodes[2].SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateCancelled, nil); err != nil && !errors.Is(err, store.ErrStateConflict) {
				t.Fatal(err)
			}
		}
	}
}

// TestClaimStatements counts what one claim of a workspace's task sends,
// with its announcing event. On Postgres a claim of a task read at its
// attempt (ClaimTaskAt, as the worker claims) is one statement, the
// guarded change with its events, whose guard takes the workspace's lock
// (migration 28); ClaimTask reads the attempt first (2). The claim used
// to send 4: BEGIN, the read that took the lock, the change, COMMIT (and
// 8 before that). On SQLite the change and its events are three
// statements of their own in a transaction with the read (6; it used to
// send 7).
func TestClaimStatements(t *testing.T) {
	want := map[string][2]int64{store.DriverPostgres: {2, 1}, store.DriverSQLite: {6, 6}}
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			announce := func(c store.Task) []store.EventInput { return []store.EventInput{{Type: "claimed"}} }
			for i, at := range []bool{false, true} {
				task := mustCreate(t, s, newTask(fmt.Sprint("count ", i)), "")
				n, stop := s.CountStatementsForTest()
				var err error
				if at {
					_, err = s.ClaimTaskAt(ctx, task.ID, task.Attempt, []store.State{store.StateQueued}, "node-a", 3, announce)
				} else {
					_, err = s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, "node-a", 3, announce)
				}
				stop()
				if err != nil {
					t.Fatal(err)
				}
				if got := n.Load(); got != want[name][i] {
					t.Errorf("claim (attempt known: %v) sent %d statements, want %d", at, got, want[name][i])
				}
			}
		})
	}
}

// TestClaimAtAMovedAttempt: a claim of a task read at an attempt that a
// claim since moved is refused as busy (the caller reads it again), and
// changes nothing.
func TestClaimAtAMovedAttempt(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			task := mustCreate(t, s, newTask("moved"), "")
			if _, err := s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, "node-a", 1, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateQueued, nil); err != nil {
				t.Fatal(err)
			}
			// task is as read before that claim: attempt 0.
			if _, err := s.ClaimTaskAt(ctx, task.ID, task.Attempt, []store.State{store.StateQueued}, "node-b", 1, nil); !errors.Is(err, store.ErrWorkspaceBusy) {
				t.Fatalf("claim at a moved attempt: %v; want ErrWorkspaceBusy", err)
			}
			got, err := s.Task(ctx, task.ID)
			if err != nil || got.State != store.StateQueued || got.Attempt != 1 || got.LeaseOwner != "node-a" {
				t.Fatalf("after the refused claim: %+v, %v; want queued, attempt 1, node-a", got, err)
			}
			claimed, err := s.ClaimTaskAt(ctx, task.ID, got.Attempt, []store.State{store.StateQueued}, "node-b", 1, nil)
			if err != nil || claimed.Attempt != 2 || claimed.LeaseOwner != "node-b" || claimed.State != store.StateRunning {
				t.Fatalf("claim at the current attempt: %+v, %v", claimed, err)
			}
		})
	}
}

// BenchmarkClaimTask claims a task of a workspace that runs two others
// (max_parallel 3), with its announcing event, and reports the statements
// each claim sends.
func BenchmarkClaimTask(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s := open(b, store.Config{})
			for i := range 2 {
				task, _, err := s.CreateTask(ctx, newTask(fmt.Sprint("running ", i)), "")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, "node", 3, nil); err != nil {
					b.Fatal(err)
				}
			}
			announce := func(c store.Task) []store.EventInput { return []store.EventInput{{Type: "claimed"}} }
			var claims int64
			for b.Loop() {
				b.StopTimer()
				task, _, err := s.CreateTask(ctx, newTask("claimed"), "")
				if err != nil {
					b.Fatal(err)
				}
				n, stop := s.CountStatementsForTest()
				b.StartTimer()
				if _, err := s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, "node", 3, announce); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				stop()
				claims += n.Load()
				if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateSucceeded, nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(claims)/float64(b.N), "statements/op")
		})
	}
}
