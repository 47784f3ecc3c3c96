package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

func TestApprovalWithoutDeadline(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) { testApprovalWithoutDeadline(t, open) })
	}
}

// An approval without a deadline is never expired by a sweep however late
// it runs, can be decided at any time, is reminded of once per recorded
// reminder even when several callers race for the same one, and is not
// reminded of once decided. A deadline and NoDeadline together are
// refused.
func testApprovalWithoutDeadline(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, store.Config{Now: clk.Now})
	task := mustCreate(t, s, newTask("wait forever"), "")
	na := newApproval(task.ID, time.Time{})
	na.NoDeadline = true
	a, err := s.CreateApproval(ctx, na)
	if err != nil {
		t.Fatal(err)
	}
	if !a.NoDeadline() || !a.ExpiresAt.IsZero() || !a.RemindedAt.IsZero() {
		t.Fatalf("created = %+v", a)
	}
	bad := newApproval(task.ID, clk.Now().Add(time.Hour))
	bad.NoDeadline = true
	if _, err := s.CreateApproval(ctx, bad); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a deadline with NoDeadline: err = %v", err)
	}
	if _, err := s.CreateApproval(ctx, newApproval(task.ID, time.Time{})); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("no deadline without NoDeadline: err = %v", err)
	}

	clk.Advance(400 * 24 * time.Hour)
	if expired, err := s.ExpireApprovals(ctx, clk.Now()); err != nil || len(expired) != 0 {
		t.Fatalf("ExpireApprovals a year on = %+v, %v", expired, err)
	}

	// Four callers race for the first reminder: one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	at := clk.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.RecordApprovalReminder(ctx, a.ID, time.Time{}, at)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d callers won the first reminder, want 1", n)
	}
	got, err := s.Approval(ctx, a.ID)
	if err != nil || !got.RemindedAt.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("after the reminder = %+v, %v", got, err)
	}
	if ok, _ := s.RecordApprovalReminder(ctx, a.ID, time.Time{}, at); ok {
		t.Error("the first reminder was recorded twice")
	}
	clk.Advance(time.Hour)
	if ok, err := s.RecordApprovalReminder(ctx, a.ID, got.RemindedAt, clk.Now()); !ok || err != nil {
		t.Fatalf("the second reminder: %v, %v", ok, err)
	}

	d, err := s.DecideApproval(ctx, a.ID, store.AllowOnce, "slack:U2", "")
	if err != nil || d.State != store.ApprovalAllowed {
		t.Fatalf("deciding = %+v, %v", d, err)
	}
	if ok, _ := s.RecordApprovalReminder(ctx, a.ID, d.RemindedAt, clk.Now().Add(time.Hour)); ok {
		t.Error("a decided approval was reminded of")
	}
}

func TestExpireTaskApprovals(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			task := mustCreate(t, s, newTask("cancel me"), "")
			other := mustCreate(t, s, newTask("keep me"), "")
			na := newApproval(task.ID, time.Time{})
			na.NoDeadline = true
			a, err := s.CreateApproval(ctx, na)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := s.CreateApproval(ctx, newApproval(other.ID, time.Now().Add(time.Hour)))
			if err != nil {
				t.Fatal(err)
			}
			closed, err := s.ExpireTaskApprovals(ctx, task.ID, "task cancelled")
			if err != nil || len(closed) != 1 || closed[0].ID != a.ID || closed[0].State != store.ApprovalExpired {
				t.Fatalf("closed = %+v, %v", closed, err)
			}
			if got, _ := s.Approval(ctx, kept.ID); got.State != store.ApprovalPending {
				t.Errorf("another task's approval is %s", got.State)
			}
			if again, err := s.ExpireTaskApprovals(ctx, task.ID, "task cancelled"); err != nil || len(again) != 0 {
				t.Errorf("closed twice: %+v, %v", again, err)
			}
		})
	}
}
