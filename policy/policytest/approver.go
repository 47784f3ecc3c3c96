// Package policytest provides fakes for code that uses package policy: a
// scripted Approver that records the requests it receives. Import it only
// from _test.go files.
package policytest

import (
	"context"
	"fmt"
	"sync"

	"reasonix/policy"
)

// Step is one scripted reply: an answer, or an error such as
// policy.ErrExpired.
type Step struct {
	Answer policy.Answer
	Err    error
}

// Once answers allow-once.
func Once() Step { return Step{Answer: policy.Answer{Choice: policy.AllowOnce}} }

// ForTask answers allow-for-task with scope.
func ForTask(scope string) Step {
	return Step{Answer: policy.Answer{Choice: policy.AllowForTask, Scope: scope}}
}

// Declined answers no, with an optional note.
func Declined(note string) Step {
	return Step{Answer: policy.Answer{Choice: policy.Decline, Note: note}}
}

// Fails replies with err.
func Fails(err error) Step { return Step{Err: err} }

// Approver replies with its steps in order and records every request. A
// request after the last step is answered with an error, so an unexpected
// prompt fails the test. It honours ctx and is safe for concurrent use.
type Approver struct {
	mu       sync.Mutex
	steps    []Step
	requests []policy.Request
}

var _ policy.Approver = (*Approver)(nil)

// NewApprover returns an approver scripted with steps.
func NewApprover(steps ...Step) *Approver { return &Approver{steps: steps} }

// Approve records req and returns the next step.
func (a *Approver) Approve(ctx context.Context, req policy.Request) (policy.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, req)
	if err := ctx.Err(); err != nil {
		return policy.Answer{}, err
	}
	if len(a.steps) == 0 {
		return policy.Answer{}, fmt.Errorf("policytest: unexpected approval request for %s", req.Call.Tool)
	}
	s := a.steps[0]
	a.steps = a.steps[1:]
	return s.Answer, s.Err
}

// Requests returns a copy of the requests received so far.
func (a *Approver) Requests() []policy.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]policy.Request(nil), a.requests...)
}
