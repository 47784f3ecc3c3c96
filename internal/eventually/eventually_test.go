package eventually

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a testing.TB that records a failure instead of stopping the
// real test, so the helper's own failure path can be asserted on.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

// TestTrueReturnsOnceTheConditionHolds runs in a synctest bubble: the
// goroutine's steps and the helper's polls follow the bubble's fake clock, so
// the test also pins when True returns, within one poll of the condition.
func TestTrueReturnsOnceTheConditionHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		var held time.Time
		go func() {
			for i := range 3 {
				time.Sleep(2 * time.Millisecond)
				if i == 2 {
					held = time.Now() // before the Add that True's read of n orders it after
				}
				n.Add(1)
			}
		}()
		r := &recorder{TB: t}
		True(r, 5*time.Second, func() bool { return n.Load() == 3 }, "n = %d", n.Load())
		if r.failed != "" {
			t.Fatalf("True failed although the condition came true: %s", r.failed)
		}
		if late := time.Since(held); held.IsZero() || late > maxPoll {
			t.Errorf("True returned %v after the condition held (at %v), more than one poll (%v)", late, held, maxPoll)
		}
	})
}

func TestTrueFailsWithTheMessageAtTheDeadline(t *testing.T) {
	r := &recorder{TB: t}
	calls := 0
	start := time.Now()
	True(r, 30*time.Millisecond, func() bool { calls++; return false }, "task %s never %s", "t_1", "ran")
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("gave up after %v, before its deadline", took)
	}
	if !strings.Contains(r.failed, "task t_1 never ran") || !strings.HasPrefix(r.failed, "after ") {
		t.Errorf("failure message = %q", r.failed)
	}
	if calls < 2 {
		t.Errorf("cond called %d times; it must be polled, and once more at the deadline", calls)
	}
}

func TestNoErrorReportsTheLastError(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	NoError(r, 20*time.Millisecond, func() error { n++; return errors.New("state " + strings.Repeat("x", n)) })
	if !strings.HasSuffix(r.failed, "state "+strings.Repeat("x", n)) {
		t.Errorf("failure %q does not end with the last error (call %d)", r.failed, n)
	}
	r = &recorder{TB: t}
	NoError(r, time.Second, func() error { return nil })
	if r.failed != "" {
		t.Errorf("NoError failed on a nil check: %s", r.failed)
	}
}
