package bot

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// memLease is one lease in memory, shared by several owners as the store's
// row is.
type memLease struct {
	mu      sync.Mutex
	owner   string
	expires time.Time
	broken  map[string]bool // owners whose database is gone
}

type memView struct {
	l     *memLease
	owner string
}

func (v memView) Claim(_ context.Context, ttl time.Duration) (bool, error) {
	v.l.mu.Lock()
	defer v.l.mu.Unlock()
	if v.l.broken[v.owner] {
		return false, errors.New("database gone")
	}
	now := time.Now()
	if v.l.owner != v.owner && now.Before(v.l.expires) {
		return false, nil
	}
	v.l.owner, v.l.expires = v.owner, now.Add(ttl)
	return true, nil
}

func (v memView) Release(context.Context) error {
	v.l.mu.Lock()
	defer v.l.mu.Unlock()
	if v.l.broken[v.owner] {
		return errors.New("database gone")
	}
	if v.l.owner == v.owner {
		v.l.owner = ""
	}
	return nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestHoldRunsWhileHeldAndReleasesAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &memLease{broken: map[string]bool{}}
		a, b := memView{l, "A"}, memView{l, "B"}
		ran := false
		err := Hold(t.Context(), a, 3*time.Second, quiet, "test", func(ctx context.Context) error {
			ran = true
			if err := Hold(ctx, b, 3*time.Second, quiet, "test", func(context.Context) error { return nil }); !errors.Is(err, ErrLeaseHeld) {
				t.Errorf("B while A holds: %v", err)
			}
			time.Sleep(10 * time.Second) // renewed throughout
			if ctx.Err() != nil {
				t.Error("A's lease was lost while renewed")
			}
			return errors.New("fn's own error")
		})
		if !ran || err == nil || err.Error() != "fn's own error" {
			t.Fatalf("Hold = %v, ran %v", err, ran)
		}
		if l.owner != "" {
			t.Errorf("not released: %q", l.owner)
		}
	})
}

// A holder that cannot reach the store stops before its lease runs out,
// and another takes the lease over only after it has.
func TestHoldStopsBeforeAnUnrenewedLeaseRunsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		l := &memLease{broken: map[string]bool{}}
		start := time.Now()
		var stopped atomic.Int64 // ns after start
		go Hold(t.Context(), memView{l, "A"}, ttl, quiet, "test", func(ctx context.Context) error {
			l.mu.Lock()
			l.broken["A"] = true
			l.mu.Unlock()
			<-ctx.Done()
			stopped.Store(int64(time.Since(start)))
			return nil
		})
		synctest.Wait()
		time.Sleep(ttl - time.Millisecond)
		if d := time.Duration(stopped.Load()); d == 0 || d >= ttl {
			t.Fatalf("A stopped %v after its last renewal; its lease runs %v", d, ttl)
		}
		if ok, _ := (memView{l, "B"}).Claim(t.Context(), ttl); ok {
			t.Fatal("B took a lease that had not run out")
		}
		time.Sleep(2 * time.Millisecond)
		if ok, _ := (memView{l, "B"}).Claim(t.Context(), ttl); !ok {
			t.Fatal("B could not take the lease over once it ran out")
		}
	})
}

func TestHoldStopsWhenAnotherTakesTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &memLease{broken: map[string]bool{}}
		err := Hold(t.Context(), memView{l, "A"}, 3*time.Second, quiet, "test", func(ctx context.Context) error {
			l.mu.Lock()
			l.owner = "B" // as after a pause longer than the ttl
			l.mu.Unlock()
			<-ctx.Done()
			return nil
		})
		if err != nil || l.owner != "B" {
			t.Fatalf("Hold = %v; owner %q, want B's lease left alone", err, l.owner)
		}
	})
}
