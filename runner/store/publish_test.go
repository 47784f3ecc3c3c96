package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// The publish outbox: a row per task, claimed under a lease only while the
// task ends or succeeded, advanced only by its holder, found again when
// its lease ran out, and reset by a new commit.
func testPublishOutbox(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := open(t, store.Config{Now: clock})
	task := mustCreate(t, s, newTask("publish"), "")

	if _, err := s.EnqueuePublish(ctx, task.ID, "repo", "", "c1"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("enqueue without a branch: %v", err)
	}
	rec, err := s.EnqueuePublish(ctx, task.ID, "repo", "reasonix/"+task.ID, "c1")
	if err != nil || rec.State != store.PublishPending || rec.Commit != "c1" {
		t.Fatalf("enqueue = %+v, %v", rec, err)
	}
	// A queued task is not ending: nobody may drive its row.
	if _, err := s.ClaimPublish(ctx, task.ID, "a", time.Minute); !errors.Is(err, store.ErrPublishBusy) {
		t.Errorf("claim of a queued task's row: %v", err)
	}
	if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, nil); err != nil {
		t.Fatal(err)
	}
	rec, err = s.ClaimPublish(ctx, task.ID, "a", time.Minute)
	if err != nil || rec.Attempts != 1 {
		t.Fatalf("claim = %+v, %v", rec, err)
	}
	if _, err := s.ClaimPublish(ctx, task.ID, "b", time.Minute); !errors.Is(err, store.ErrPublishBusy) {
		t.Errorf("a second owner's claim under the lease: %v", err)
	}
	rec.State = store.PublishPushed
	if err := s.AdvancePublish(ctx, rec, "b", nil); !errors.Is(err, store.ErrPublishBusy) {
		t.Errorf("advance by a non-holder: %v", err)
	}
	if err := s.AdvancePublish(ctx, rec, "a", nil); err != nil {
		t.Fatal(err)
	}
	// A running task's row is not due: its run drives it.
	if due, err := s.DuePublishes(ctx, 10); err != nil || len(due) != 0 {
		t.Errorf("due while running = %v, %v", due, err)
	}
	if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, store.StateSucceeded,
		&store.StateOpts{Result: &store.Result{Summary: "s", Publish: "pending"}}); err != nil {
		t.Fatal(err)
	}
	if due, err := s.DuePublishes(ctx, 10); err != nil || len(due) != 0 {
		t.Errorf("due under a live lease = %v, %v", due, err)
	}
	advance(2 * time.Minute)
	if due, err := s.DuePublishes(ctx, 10); err != nil || len(due) != 1 || due[0] != task.ID {
		t.Fatalf("due after the lease = %v, %v", due, err)
	}
	rec, err = s.ClaimPublish(ctx, task.ID, "b", time.Minute)
	if err != nil || rec.State != store.PublishPushed || rec.Attempts != 2 {
		t.Fatalf("takeover = %+v, %v", rec, err)
	}
	rec.State, rec.PRNumber, rec.PRURL, rec.PRState = store.PublishDone, 7, "https://forge/pr/7", "open"
	res := &store.Result{Summary: "s", Publish: "pr", PR: &store.PullRequest{URL: rec.PRURL, Number: 7, State: "open"}}
	if err := s.AdvancePublish(ctx, rec, "b", res, store.EventInput{Type: "published", Payload: []byte(`{"state":"pr"}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Task(ctx, task.ID)
	if err != nil || got.Result == nil || got.Result.PR == nil || got.Result.PR.Number != 7 || got.Result.Summary != "s" {
		t.Errorf("task result = %+v, %v", got.Result, err)
	}
	evs, _ := s.Events(ctx, task.ID, 0, 0)
	if len(evs) == 0 || evs[len(evs)-1].Type != "published" {
		t.Errorf("the published event is not last: %v", evs)
	}
	if _, err := s.ClaimPublish(ctx, task.ID, "b", time.Minute); !errors.Is(err, store.ErrPublishBusy) {
		t.Errorf("claim of a done row: %v", err)
	}
	// The same commit again changes nothing; a new one is pending again
	// and keeps the pull request.
	if rec, err := s.EnqueuePublish(ctx, task.ID, "repo", "reasonix/"+task.ID, "c1"); err != nil || rec.State != store.PublishDone {
		t.Errorf("re-enqueue of the same commit = %+v, %v", rec, err)
	}
	rec, err = s.EnqueuePublish(ctx, task.ID, "repo", "reasonix/"+task.ID, "c2")
	if err != nil || rec.State != store.PublishPending || rec.PRNumber != 7 || rec.Attempts != 0 {
		t.Errorf("enqueue of a new commit = %+v, %v", rec, err)
	}
	if _, err := s.Publish(ctx, "t_none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Publish of an unknown task: %v", err)
	}
	// A review names the pull request: it finds the task by workspace and
	// number, and nothing for another workspace's or number.
	if rec, err := s.PublishOfPR(ctx, "repo", 7); err != nil || rec.TaskID != task.ID {
		t.Errorf("PublishOfPR(repo, 7) = %+v, %v", rec, err)
	}
	for _, c := range []struct {
		ws string
		n  int
	}{{"other", 7}, {"repo", 8}, {"repo", 0}, {"", 7}} {
		if _, err := s.PublishOfPR(ctx, c.ws, c.n); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("PublishOfPR(%q, %d): %v", c.ws, c.n, err)
		}
	}
}
