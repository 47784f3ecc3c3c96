package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The storm breaker: a model that sends the same calls again after they
// failed, and again, is not going to get anywhere by a fourth try, and
// every try costs a request. Three failing batches in a row that are
// equivalent (the same tools with the same arguments, in any order) stop
// the run with a reason naming the calls and the last error. A batch with
// any success in it, or a different batch, starts the count again. Several
// calls in one batch are one try, not several.

// stormTries is how many equivalent failing batches in a row stop a run.
const stormTries = 3

// ErrStorm is the cause of a run the storm breaker stopped.
var ErrStorm = errors.New("agent: the same tool calls failed again and again")

// storm is the breaker's memory of the batches so far.
type storm struct {
	last  string // fingerprint of the last batch, when it failed
	tries int    // equivalent failing batches in a row
}

// observe records a batch and its results and returns the error to stop the
// run with, or nil.
func (s *storm) observe(calls []ToolCall, results []callResult) error {
	if len(calls) == 0 || len(results) != len(calls) {
		*s = storm{}
		return nil
	}
	for _, r := range results {
		if r.refused || !strings.HasPrefix(r.content, toolErrorPrefix) {
			*s = storm{} // a success, or a refusal, which the gate reports
			return nil
		}
	}
	fp := fingerprint(calls)
	if fp != s.last {
		s.last, s.tries = fp, 0
	}
	s.tries++
	if s.tries < stormTries {
		return nil
	}
	*s = storm{}
	last := results[len(results)-1].content
	if i := strings.IndexByte(last, '\n'); i >= 0 {
		last = last[:i]
	}
	return fmt.Errorf("%w: %s failed %d times in a row with the same arguments; the last time: %s",
		ErrStorm, callNames(calls), stormTries, bound(last, 300))
}

// fingerprint identifies a batch by its calls' tools and arguments (the
// arguments' JSON made canonical), whatever their order and ids.
func fingerprint(calls []ToolCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		args := c.Arguments
		var v any
		if json.Unmarshal([]byte(args), &v) == nil {
			if b, err := json.Marshal(v); err == nil {
				args = string(b)
			}
		}
		parts[i] = c.Name + "\x00" + args
	}
	slices.Sort(parts)
	return strings.Join(parts, "\x01")
}

// callNames lists a batch's tools for a reason: "bash", "bash, read_file".
func callNames(calls []ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// bound cuts s to at most n bytes on a character boundary.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return validPrefix(s[:n]) + "…"
}
