package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"reasonix/agent"
)

// failing is a tool that fails, except for the arguments {"ok":true}.
var failing = &fakeTool{name: "build", fn: func(_ context.Context, args json.RawMessage) (string, error) {
	if strings.Contains(string(args), `"ok":true`) {
		return "built", nil
	}
	return "", errors.New("compile error: x.go:3: undefined: y\nmore detail")
}}

// run drives an agent whose model sends these batches, then answers.
func stormRun(t *testing.T, batches ...[]agent.ToolCall) (agent.Result, *script) {
	t.Helper()
	var replies []func(agent.Request) []agent.Chunk
	for _, b := range batches {
		replies = append(replies, callTools(b...))
	}
	p := &script{replies: append(replies, say("gave up"))}
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, failing), Gate: allowAll, MaxSteps: 20})
	return a.Run(context.Background(), "build it"), p
}

func build(id, args string) agent.ToolCall {
	return agent.ToolCall{ID: id, Name: "build", Arguments: args}
}

// TestStormBreakerStopsTheThirdEquivalentFailure: the same failing calls
// three times in a row (argument order and call ids aside) stop the run,
// failed, with a reason naming the tool and the error; no fourth request.
func TestStormBreakerStopsTheThirdEquivalentFailure(t *testing.T) {
	res, p := stormRun(t,
		[]agent.ToolCall{build("a", `{"pkg":"x","v":1}`)},
		[]agent.ToolCall{build("b", `{"v":1, "pkg":"x"}`)},
		[]agent.ToolCall{build("c", `{"pkg":"x","v":1}`)},
		[]agent.ToolCall{build("d", `{"pkg":"x","v":1}`)},
	)
	if res.Outcome != agent.OutcomeFailed || !errors.Is(res.Err, agent.ErrStorm) || res.Steps != 3 || len(p.requests) != 3 {
		t.Fatalf("result = %+v after %d requests", res, len(p.requests))
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "build failed 3 times in a row") || !strings.Contains(msg, "undefined: y") ||
		strings.Contains(msg, "more detail") {
		t.Fatalf("reason = %q", msg)
	}
}

// TestStormBreakerCountsOnlyRepeatsInARow: a different batch, or a success
// in one, starts the count again; several calls in one batch are one try.
func TestStormBreakerCountsOnlyRepeatsInARow(t *testing.T) {
	same := []agent.ToolCall{build("1", `{"pkg":"x"}`), build("2", `{"pkg":"x"}`)}
	res, _ := stormRun(t,
		same, same,
		[]agent.ToolCall{build("3", `{"pkg":"y"}`)},
		same, same,
		[]agent.ToolCall{build("4", `{"pkg":"x"}`), build("5", `{"ok":true}`)},
		same, same,
	)
	if res.Outcome != agent.OutcomeSucceeded || res.FinalAnswer != "gave up" {
		t.Fatalf("result = %+v", res)
	}
}
