package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
)

// ToolCases are what TestTool needs to know about one tool beyond what every
// tool is checked for. The zero value checks a writer with no sample calls.
type ToolCases struct {
	// ReadOnly is what agent.IsReadOnly must report: a tool that drifts from
	// its declared class would skip (or needlessly need) approval.
	ReadOnly bool
	// Valid are argument objects the tool must accept: each call returns a
	// non-empty result and no error, and the arguments satisfy the tool's own
	// schema. For a read-only tool they are also run concurrently on one
	// instance and must give the same results as when run alone, so they
	// should be deterministic.
	Valid []string
	// Invalid are well-formed argument objects the tool must refuse with an
	// error, e.g. a missing required argument or one of the wrong type.
	Invalid []string
	// Blocking, when set, is an argument object whose call runs until its
	// context ends (a long sleep). TestTool cancels such a call while it runs
	// and expects a prompt error wrapping context.Canceled.
	Blocking string
}

// malformedArgs are argument texts that are not a JSON object. The harness
// refuses them before a call, but a tool is also called directly (by MCP
// clients, sub-agents, tests), so it must refuse them itself.
var malformedArgs = []string{
	`{`,
	`{"path":`,
	`{"a":1,}`,
	`{}}`,
	`{} {}`,
	`{'a':1}`,
	`not json`,
	`[1,2]`,
	`"text"`,
	`42`,
	`true`,
	strings.Repeat("[", 100_000),
}

// oddArgs are inputs a tool may accept or refuse, but must survive: "" and
// null are how some models send "no arguments". Their calls get a context
// that ends after a second.
var oddArgs = []string{``, `null`, " \n\t", "{\"\xff\xfe\":\"\xc3\x28\"}"}

// toolNamePattern is what every model API accepts as a function name.
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// callTimeout bounds a single call the suite makes, so that a tool that
// ignores its context fails the test instead of hanging it.
const callTimeout = 30 * time.Second

// promptly is how soon a call must return once its context has ended. It is
// generous because the machines that run tests are often busy.
const promptly = 10 * time.Second

// TestTool checks that tools built by mk keep the agent.Tool contract, in
// subtests: a stable name valid for every model API, a description, a
// parameters schema that is a JSON object schema, a stable read-only class
// equal to cases.ReadOnly, the cases' valid and invalid calls, malformed
// arguments refused with a non-empty error and never a panic, prompt
// returns once the context has ended, and race-free concurrent calls of
// read-only tools (run the test with -race for that to mean something).
//
// mk is called once per subtest, and twice where stability across instances
// is checked; it may return a shared instance when building one is costly.
// The subtests do not run in parallel.
func TestTool(t *testing.T, mk func(t *testing.T) agent.Tool, cases ToolCases) {
	t.Helper()
	t.Run("Name", func(t *testing.T) {
		a, b := mk(t), mk(t)
		name := a.Name()
		if !toolNamePattern.MatchString(name) {
			t.Errorf("name %q does not match %s", name, toolNamePattern)
		}
		if a.Name() != name || b.Name() != name {
			t.Errorf("name is not stable: %q, then %q, and %q from another instance", name, a.Name(), b.Name())
		}
	})
	t.Run("Description", func(t *testing.T) {
		a, b := mk(t), mk(t)
		d := a.Description()
		if strings.TrimSpace(d) == "" {
			t.Errorf("%s: empty description: the model cannot tell when to call it", a.Name())
		}
		if a.Description() != d || b.Description() != d {
			t.Errorf("%s: description is not stable", a.Name())
		}
	})
	t.Run("Schema", func(t *testing.T) {
		a, b := mk(t), mk(t)
		s := checkSchema(t, a)
		// Request prefixes must stay byte-stable for prompt caches.
		c1, _ := agent.CanonicalSchema(a.Schema())
		c2, _ := agent.CanonicalSchema(b.Schema())
		if !bytes.Equal(c1, c2) {
			t.Errorf("%s: schema differs between instances:\n%s\n%s", a.Name(), c1, c2)
		}
		for _, args := range cases.Valid {
			if s != nil {
				if err := s.validate(args); err != nil {
					t.Errorf("%s: valid case %s does not satisfy the schema: %v", a.Name(), args, err)
				}
			}
		}
	})
	t.Run("ReadOnly", func(t *testing.T) {
		a, b := mk(t), mk(t)
		if got := agent.IsReadOnly(a); got != cases.ReadOnly {
			t.Errorf("%s: IsReadOnly = %v, want %v", a.Name(), got, cases.ReadOnly)
		}
		if agent.IsReadOnly(a) != agent.IsReadOnly(a) || agent.IsReadOnly(b) != agent.IsReadOnly(a) {
			t.Errorf("%s: IsReadOnly is not stable", a.Name())
		}
	})
	if len(cases.Valid) > 0 {
		t.Run("Valid", func(t *testing.T) {
			tl := mk(t)
			for _, args := range cases.Valid {
				out, err := call(t, t.Context(), tl, args)
				if err != nil {
					t.Errorf("%s(%s): %v", tl.Name(), args, err)
				} else if out == "" {
					t.Errorf("%s(%s) returned an empty result and no error", tl.Name(), args)
				}
			}
		})
	}
	if len(cases.Invalid) > 0 {
		t.Run("Invalid", func(t *testing.T) {
			tl := mk(t)
			for _, args := range cases.Invalid {
				out, err := call(t, t.Context(), tl, args)
				if err == nil {
					t.Errorf("%s(%s) = %q, want an error", tl.Name(), args, out)
				} else if strings.TrimSpace(err.Error()) == "" {
					t.Errorf("%s(%s): an empty error tells the model nothing to correct", tl.Name(), args)
				}
			}
		})
	}
	t.Run("Malformed", func(t *testing.T) {
		tl := mk(t)
		for _, args := range malformedArgs {
			out, err := call(t, t.Context(), tl, args)
			if err == nil {
				t.Errorf("%s(%.40q) = %.80q, want an error: the arguments are not a JSON object", tl.Name(), args, out)
			} else if strings.TrimSpace(err.Error()) == "" {
				t.Errorf("%s(%.40q): an empty error tells the model nothing to correct", tl.Name(), args)
			}
		}
		// Odd arguments may be taken as "no arguments" and start a call
		// that runs until its context ends (a Blocking tool); bound it.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		for _, args := range oddArgs {
			call(t, ctx, tl, args) // only panics and hangs fail
		}
	})
	t.Run("CancelledContext", func(t *testing.T) {
		tl := mk(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		args := append(append([]string(nil), cases.Valid...), cases.Blocking)
		if len(cases.Valid) == 0 && cases.Blocking == "" {
			args = []string{`{}`}
		}
		for _, a := range args {
			if a == "" {
				continue
			}
			start := time.Now()
			call(t, ctx, tl, a)
			if d := time.Since(start); d > promptly {
				t.Errorf("%s(%s) with a cancelled context took %v", tl.Name(), a, d)
			}
		}
	})
	if cases.Blocking != "" {
		t.Run("CancelWhileRunning", func(t *testing.T) {
			tl := mk(t)
			ctx, cancel := context.WithCancel(t.Context())
			// Give the call time to get going: cancelling before it starts
			// is the CancelledContext case.
			timer := time.AfterFunc(200*time.Millisecond, cancel)
			defer timer.Stop()
			start := time.Now()
			out, err := call(t, ctx, tl, cases.Blocking)
			d := time.Since(start)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s(%s) after cancel = %q, %v; want an error wrapping context.Canceled", tl.Name(), cases.Blocking, out, err)
			}
			if d > 200*time.Millisecond+promptly {
				t.Errorf("%s(%s) returned %v after it was cancelled", tl.Name(), cases.Blocking, d-200*time.Millisecond)
			}
		})
	}
	if cases.ReadOnly && len(cases.Valid) > 0 {
		t.Run("ConcurrentReads", func(t *testing.T) {
			tl := mk(t)
			type result struct {
				out string
				err bool
			}
			alone := make([]result, len(cases.Valid))
			for i, args := range cases.Valid {
				out, err := call(t, t.Context(), tl, args)
				alone[i] = result{out, err != nil}
			}
			const workers = 8
			var wg sync.WaitGroup
			got := make([][]result, workers)
			for w := range workers {
				got[w] = make([]result, len(cases.Valid))
				wg.Go(func() {
					for i := range cases.Valid {
						// Each worker starts at a different case so that
						// different calls overlap, not only equal ones.
						k := (i + w) % len(cases.Valid)
						out, err := call(t, t.Context(), tl, cases.Valid[k])
						got[w][k] = result{out, err != nil}
					}
				})
			}
			wg.Wait()
			for w := range workers {
				for i, r := range got[w] {
					if r != alone[i] {
						t.Errorf("%s(%s) run concurrently = %.200q (error %v), alone = %.200q (error %v)",
							tl.Name(), cases.Valid[i], r.out, r.err, alone[i].out, alone[i].err)
					}
				}
			}
		})
	}
}

// call runs one Execute, turning a panic or a hang into a test failure
// (reported with t.Errorf, so call is safe from other goroutines).
func call(t *testing.T, ctx context.Context, tl agent.Tool, args string) (out string, err error) {
	type result struct {
		out   string
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			r.panic = recover()
			done <- r
		}()
		r.out, r.err = tl.Execute(ctx, json.RawMessage(args))
	}()
	timer := time.NewTimer(callTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.panic != nil {
			t.Errorf("%s(%.60q) panicked: %v", tl.Name(), args, r.panic)
			return "", fmt.Errorf("panic: %v", r.panic)
		}
		return r.out, r.err
	case <-timer.C:
		t.Errorf("%s(%.60q) did not return within %v", tl.Name(), args, callTimeout)
		return "", errors.New("hung")
	}
}
