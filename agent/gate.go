package agent

import (
	"context"
	"encoding/json"
)

// Call is a tool call as the gate sees it.
type Call struct {
	ID       string
	Tool     string
	ReadOnly bool
	Args     json.RawMessage
}

// Refusal codes say who refused a call, so "nobody was asked" is never
// reported as "the user said no".
const (
	RefusedByRule     = "deny_rule"  // an explicit deny rule, or a policy that forbids it
	RefusedByPerson   = "declined"   // a person said no
	RefusedUnattended = "unattended" // a human was needed and nobody could be asked
	RefusedExpired    = "expired"    // a human was asked and did not answer in time
)

// Verdict is a gate's answer. A refused call carries a Code (one of the
// Refused* constants) and a Reason written for the model.
type Verdict struct {
	Allowed bool
	Code    string
	Reason  string
}

// Allow is the verdict that lets a call run.
var Allow = Verdict{Allowed: true}

// Gate decides whether a tool call may run. Authorize may block while a
// human is asked; it must honour ctx. An error means the decision itself
// failed (a store was unreachable): the harness refuses the call and ends
// the run, it never runs a call it could not authorize.
type Gate interface {
	Authorize(ctx context.Context, call Call) (Verdict, error)
}

// GateFunc adapts a function to Gate.
type GateFunc func(ctx context.Context, call Call) (Verdict, error)

// Authorize calls f.
func (f GateFunc) Authorize(ctx context.Context, call Call) (Verdict, error) { return f(ctx, call) }

// ReadOnlyGate allows read-only calls and refuses every writer as unattended:
// the fail-closed default when no policy is configured.
var ReadOnlyGate Gate = GateFunc(func(_ context.Context, c Call) (Verdict, error) {
	if c.ReadOnly {
		return Allow, nil
	}
	return Verdict{Code: RefusedUnattended, Reason: "this run has no approver and " + c.Tool + " changes files or runs commands; rerun with --auto to allow ordinary writes"}, nil
})

type toolCallKey struct{}

// ContextWithToolCall returns ctx carrying the call a tool is executing, so
// a tool can tag the progress it reports with the call's ID.
func ContextWithToolCall(ctx context.Context, c ToolCall) context.Context {
	return context.WithValue(ctx, toolCallKey{}, c)
}

// ToolCallFromContext returns the call the harness is executing in ctx.
func ToolCallFromContext(ctx context.Context) (ToolCall, bool) {
	c, ok := ctx.Value(toolCallKey{}).(ToolCall)
	return c, ok
}
