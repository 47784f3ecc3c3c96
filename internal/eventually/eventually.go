// Package eventually waits, in tests, for a condition that another goroutine
// or process makes true: a task reaching a state, a file appearing, a process
// exiting. It is the one polling loop of the test suite, so that every wait
// has a deadline, and a wait that runs out fails the test with a message
// instead of falling through to assertions whose premise never held.
//
// Prefer waiting on the event itself (a channel, a returned error) where the
// code offers one; poll only what is observable from outside.
package eventually

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// DefaultTimeout is the deadline when a caller passes 0. It is generous
// because the suite runs with the race detector on small shared machines: a
// passing wait returns as soon as its condition holds, so only a failing test
// pays for it.
const DefaultTimeout = 20 * time.Second

// The first polls come quickly (most conditions hold within milliseconds),
// later ones back off so that a long wait does not spin on a busy machine.
const (
	firstPoll = time.Millisecond
	maxPoll   = 20 * time.Millisecond
)

// True calls cond until it returns true and fails the test (t.Fatalf with
// format and args, prefixed with how long it waited) if that has not happened
// within timeout (DefaultTimeout when 0). cond runs on the calling goroutine,
// so it may itself call t.Fatal; it is always called at least once, and once
// more after the deadline, so a condition that became true while the test
// slept is not reported as a failure.
func True(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	waited, err := poll(timeout, func() error {
		if cond() {
			return nil
		}
		return errFalse
	})
	if err != nil {
		t.Fatalf("after %v: %s", waited, fmt.Sprintf(format, args...))
	}
}

// NoError calls check until it returns nil and fails the test with the last
// error it returned if that has not happened within timeout (DefaultTimeout
// when 0). Use it when the reason a condition does not hold yet (the state
// seen last, the error of the last attempt) is what a failure should show.
func NoError(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	if waited, err := poll(timeout, check); err != nil {
		t.Fatalf("after %v: %v", waited, err)
	}
}

var errFalse = errors.New("condition false")

// poll returns nil once check does, or how long it waited and check's last
// error when the deadline passed.
func poll(timeout time.Duration, check func() error) (time.Duration, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	start := time.Now()
	deadline := start.Add(timeout)
	for wait := firstPoll; ; wait = min(2*wait, maxPoll) {
		err := check()
		if err == nil {
			return 0, nil
		}
		if !time.Now().Before(deadline) {
			return time.Since(start).Round(time.Millisecond), err
		}
		time.Sleep(min(wait, time.Until(deadline)))
	}
}
