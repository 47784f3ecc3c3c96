package backoff

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// maxRand always picks the top of the range, so Delay returns its ceiling.
func maxRand(n int64) int64 { return n - 1 }

func TestDelayGrowsExponentiallyUpToCap(t *testing.T) {
	p := Policy{Base: 500 * time.Millisecond, Cap: 30 * time.Second, Rand: maxRand}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for attempt, w := range want {
		if got := p.Delay(attempt, 0); got != w {
			t.Errorf("Delay(%d) = %v, want %v", attempt, got, w)
		}
	}
	if got := p.Delay(1000, 0); got != 30*time.Second {
		t.Errorf("Delay(1000) = %v, want the cap (no overflow)", got)
	}
	if got := p.Delay(-3, 0); got != 500*time.Millisecond {
		t.Errorf("Delay(-3) = %v, want base", got)
	}
}

func TestDelayIsFullJitter(t *testing.T) {
	var asked []int64
	p := Policy{Base: time.Second, Cap: time.Minute, Rand: func(n int64) int64 { asked = append(asked, n); return 0 }}
	if got := p.Delay(2, 0); got != 0 {
		t.Fatalf("Delay with zero jitter = %v, want 0", got)
	}
	if len(asked) != 1 || asked[0] != int64(4*time.Second)+1 {
		t.Fatalf("Rand asked for %v, want [4s+1]", asked)
	}
	// With the real source every delay lies inside the range.
	live := Policy{Base: 10 * time.Millisecond, Cap: time.Second}
	for i := range 200 {
		if d := live.Delay(3, 0); d < 0 || d > 80*time.Millisecond {
			t.Fatalf("draw %d: %v outside [0, 80ms]", i, d)
		}
	}
}

func TestDelayHonoursFloorAboveCap(t *testing.T) {
	p := Policy{Base: time.Second, Cap: 2 * time.Second, Rand: func(int64) int64 { return 0 }}
	if got := p.Delay(0, 1500*time.Millisecond); got != 1500*time.Millisecond {
		t.Errorf("floor below cap: got %v", got)
	}
	if got := p.Delay(5, time.Minute); got != time.Minute {
		t.Errorf("floor above cap: got %v, want 1m", got)
	}
	if got := (Policy{}).Delay(4, 3*time.Second); got != 3*time.Second {
		t.Errorf("zero policy: got %v, want the floor", got)
	}
}

func TestSleepHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(t.Context(), 5*time.Second); err != nil {
			t.Fatalf("Sleep: %v", err)
		}
		if got := time.Since(start); got != 5*time.Second {
			t.Fatalf("slept %v, want 5s", got)
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		err := Sleep(ctx, time.Hour)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Fatalf("Sleep with deadline: err %v after %v", err, time.Since(start))
		}
		if err := Sleep(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Sleep(0) on ended ctx: %v", err)
		}
	})
}
