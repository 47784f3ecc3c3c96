package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// testStateEvents: every change that takes events (creation, claim, state
// change, requeue, stale requeue) writes them in its own transaction, in
// order and numbered after what the log holds, and a change that does not
// happen writes none.
func testStateEvents(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	ev := func(typ string, payload any) store.EventInput {
		b, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		return store.EventInput{Type: typ, Payload: b}
	}
	types := func(id string) []string {
		t.Helper()
		evs, err := s.Events(ctx, id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d: the log has a gap", i, e.Seq)
			}
			out = append(out, e.Type)
		}
		return out
	}
	want := func(id string, w ...string) {
		t.Helper()
		if got := types(id); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("log = %v, want %v", got, w)
		}
	}

	nt := newTask("announced")
	nt.Workspace = ""
	nt.Events = []store.EventInput{ev("queued", map[string]any{"state": "queued"})}
	task := mustCreate(t, s, nt, "k1")
	want(task.ID, "queued")
	if _, created, err := s.CreateTask(ctx, nt, "k1"); err != nil || created {
		t.Fatalf("duplicate intake: created=%v err=%v", created, err)
	}
	want(task.ID, "queued") // the duplicate wrote nothing

	claimed, err := s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, "node-a", 1, func(c store.Task) []store.EventInput {
		return []store.EventInput{ev("running", map[string]any{"attempt": c.Attempt})}
	})
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Events(ctx, task.ID, 1, 0)
	var got struct{ Attempt int }
	if len(evs) != 1 || json.Unmarshal(evs[0].Payload, &got) != nil || got.Attempt != claimed.Attempt || got.Attempt != 1 {
		t.Fatalf("claim's event = %+v, want the claimed attempt %d", evs, claimed.Attempt)
	}
	if _, err := s.AppendEvent(ctx, task.ID, "step", nil); err != nil {
		t.Fatal(err)
	}

	// A change that does not happen writes nothing.
	_, err = s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateCancelled,
		&store.StateOpts{Events: []store.EventInput{ev("cancelled", nil)}})
	if !errors.Is(err, store.ErrStateConflict) {
		t.Fatalf("conflicting change: %v", err)
	}
	if _, err := s.Requeue(ctx, task.ID, []store.State{store.StateInterrupted}, ev("requeued", nil)); !errors.Is(err, store.ErrStateConflict) {
		t.Fatalf("conflicting requeue: %v", err)
	}
	if _, err := s.RequeueStale(ctx, task.ID, "node-b", time.Now().Add(time.Hour), ev("stale", nil)); !errors.Is(err, store.ErrStateConflict) {
		t.Fatalf("stale requeue of another owner's task: %v", err)
	}
	// Nor does one with an event that is not JSON: the change is refused whole.
	_, err = s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateSucceeded,
		&store.StateOpts{Events: []store.EventInput{{Type: "bad", Payload: json.RawMessage("{")}}})
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("event that is not JSON: %v", err)
	}
	if got, _ := s.Task(ctx, task.ID); got.State != store.StateRunning {
		t.Fatalf("state after a refused change = %s", got.State)
	}
	want(task.ID, "queued", "running", "step")

	done, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateSucceeded,
		&store.StateOpts{Result: &store.Result{Summary: "ok"}, Events: []store.EventInput{ev("report", nil), ev("succeeded", nil)}})
	if err != nil || done.State != store.StateSucceeded || done.Result == nil || done.Result.Summary != "ok" {
		t.Fatalf("finish: %+v, %v", done, err)
	}
	if _, err := s.Requeue(ctx, task.ID, []store.State{store.StateSucceeded}, ev("continued", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, "node-b", 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequeueStale(ctx, task.ID, "node-b", time.Now().Add(time.Hour), ev("released", nil), ev("queued", nil)); err != nil {
		t.Fatal(err)
	}
	want(task.ID, "queued", "running", "step", "report", "succeeded", "continued", "released", "queued")

	// Changes with events and plain appends racing on one task: the log
	// stays dense, and each change's events stay together and in order.
	if _, err := s.ClaimTask(ctx, task.ID, []store.State{store.StateQueued}, "node-c", 1, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 10 {
				if _, err := s.AppendEvent(ctx, task.ID, "step", nil); err != nil {
					t.Errorf("append: %v", err)
				}
			}
		})
		wg.Go(func() {
			for range 5 {
				_, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateRunning,
					&store.StateOpts{Events: []store.EventInput{ev("a", i), ev("b", i)}})
				if err != nil {
					t.Errorf("change: %v", err)
				}
			}
		})
	}
	wg.Wait()
	evs, err = s.Events(ctx, task.ID, 8, 0)
	if err != nil || len(evs) != 4*10+4*5*2 {
		t.Fatalf("%d events after the race (%v), want %d", len(evs), err, 4*10+4*5*2)
	}
	for i, e := range evs {
		if e.Seq != int64(9+i) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if e.Type == "a" && (i+1 == len(evs) || evs[i+1].Type != "b" || string(evs[i+1].Payload) != string(e.Payload)) {
			t.Fatalf("a change's events were split: %s at seq %d is not followed by its b", e.Payload, e.Seq)
		}
	}
}
