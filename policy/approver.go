package policy

import (
	"context"
	"errors"

	"reasonix/agent"
)

// Approver asks a person about one call. Implementations (the runner's
// approval broker, the chat relay) must honour ctx and be safe for
// concurrent use.
type Approver interface {
	// Approve blocks until a person decides. An error wrapping ErrExpired
	// means nobody answered in time, one wrapping ErrUnattended that
	// nobody could be asked; any other error means the request itself
	// failed and the call is not run.
	Approve(ctx context.Context, req Request) (Answer, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Request) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// Errors an Approver returns when no person decided.
var (
	ErrExpired    = errors.New("policy: nobody answered the approval request in time")
	ErrUnattended = errors.New("policy: nobody can approve calls for this task")
)

// Request is what a person is asked to decide.
type Request struct {
	Call agent.Call
	// Subject is the shell command or the path(s) the call touches; empty
	// when the arguments expose none.
	Subject string
	// Preview shows what the call will do, bounded to a few KiB.
	Preview string
	// Reason says why a person is asked (the rule, or what makes a shell
	// command risky).
	Reason string
	// Scopes are the grants the person may choose for the rest of the
	// task, best first, e.g. "Bash=go test ./x", "Bash(go test:*)",
	// "Edit(docs/a.md)". Empty when only allow-once is possible (an
	// explicit ask rule).
	Scopes []string
}

// Choice is a person's decision.
type Choice int

// Choices. The zero value is not a decision.
const (
	AllowOnce    Choice = iota + 1 // run this call only
	AllowForTask                   // run it and grant Answer.Scope for the rest of the task
	Decline                        // do not run it
)

// Answer is a person's decision on a Request.
type Answer struct {
	Choice Choice
	// Scope is one of Request.Scopes; required with AllowForTask.
	Scope string
	// Note is an optional message from the person, passed to the model
	// with a refusal (e.g. "use make test instead").
	Note string
}
