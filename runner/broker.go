package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
	"reasonix/policy"
	"reasonix/runner/internal/execute"
	"reasonix/runner/store"
)

// maxPreview bounds what an approver is shown of a call.
const maxPreview = 4 << 10

// broker is the policy.Approver of one task. It never blocks: a call that
// needs a person gets a durable approval record and suspends the run (the
// worker parks the job); when the run resumes and the gate asks again about
// the same call, the broker answers from the decision.
type broker struct {
	s    *Service
	task store.Task
}

var _ policy.Approver = (*broker)(nil)

// suspendError carries the approval a suspended run waits for. It wraps
// agent.ErrSuspend, which makes the harness stop instead of failing.
type suspendError struct{ approval store.Approval }

func (e *suspendError) Error() string {
	return fmt.Sprintf("runner: waiting for approval %s", e.approval.ID)
}

func (e *suspendError) Unwrap() error { return agent.ErrSuspend }

// callHash binds a decision to the exact call: the tool and its canonical
// arguments.
func callHash(c agent.Call) string {
	h := sha256.New()
	h.Write([]byte(c.Tool))
	h.Write([]byte{0})
	h.Write(execute.CanonicalJSON(c.Args))
	return hex.EncodeToString(h.Sum(nil))
}

// attended reports whether anybody can be asked about the task's calls:
// API and CLI tasks are decided through the API, chat tasks in their
// thread; a webhook or schedule without a chat target has nobody.
func attended(t store.Task) bool {
	switch t.Source {
	case store.SourceWebhook, store.SourceCron:
		return len(t.Notify) > 0
	}
	return true
}

func (b *broker) Approve(ctx context.Context, req policy.Request) (policy.Answer, error) {
	s, hash := b.s, callHash(req.Call)
	a, ok, err := s.decided(ctx, b.task.ID, hash)
	if err != nil {
		return policy.Answer{}, err
	}
	if ok {
		switch {
		case a.State == store.ApprovalExpired:
			return policy.Answer{}, fmt.Errorf("runner: approval %s: %w", a.ID, policy.ErrExpired)
		case a.Decision == store.Deny:
			return policy.Answer{Choice: policy.Decline, Note: a.Note}, nil
		case a.Decision == store.AllowTask && a.Scope != "":
			if err := s.st.AddGrant(ctx, b.task.ID, a.Scope); err != nil {
				return policy.Answer{}, err
			}
			return policy.Answer{Choice: policy.AllowForTask, Scope: a.Scope}, nil
		default:
			return policy.Answer{Choice: policy.AllowOnce}, nil
		}
	}
	if !attended(b.task) {
		s.metrics.approvals.WithLabelValues("unattended").Inc()
		return policy.Answer{}, fmt.Errorf("runner: task %s: %w", b.task.ID, policy.ErrUnattended)
	}
	instructors, err := s.instructors(ctx, b.task)
	if err != nil {
		return policy.Answer{}, err
	}
	expires, none := s.deadlineOf(b.task)
	a, err = s.st.CreateApproval(ctx, store.NewApproval{
		TaskID:      b.task.ID,
		Instructors: instructors,
		Tool:        req.Call.Tool,
		Subject:     truncate(req.Subject, maxPreview),
		CallHash:    hash,
		Preview:     callPreview(req),
		Requester:   b.task.Requester,
		Approvers:   b.task.Approvers,
		Scopes:      req.Scopes,
		ExpiresAt:   expires,
		NoDeadline:  none,
	})
	if err != nil {
		return policy.Answer{}, err
	}
	s.metrics.approvals.WithLabelValues("requested").Inc()
	payload := approvalPayload(a, req.Reason)
	if len(grantTargets(b.task)) == 0 {
		delete(payload, "always_scope") // nothing to allow always for: a scratch task of the API or chat
	}
	s.emitLogged(ctx, b.task.ID, "approval_requested", payload)
	return policy.Answer{}, &suspendError{approval: a}
}

// decided finds the task's answer to the call or plan whose hash is given:
// a pending request (a spurious wake) suspends the run again; a decision no
// run has acted on yet is consumed — once, even across nodes — and
// returned; ok is false when nobody was asked yet.
func (s *Service) decided(ctx context.Context, taskID, hash string) (a store.Approval, ok bool, err error) {
	prior, err := s.st.ApprovalsForCall(ctx, taskID, hash)
	if err != nil {
		return store.Approval{}, false, err
	}
	for _, a := range prior { // newest first
		if !a.ConsumedAt.IsZero() {
			continue
		}
		if a.State == store.ApprovalPending {
			return store.Approval{}, false, &suspendError{approval: a}
		}
		used, err := s.st.ConsumeApproval(ctx, a.ID)
		if err != nil {
			return store.Approval{}, false, err
		}
		if used {
			return a, true, nil
		}
	}
	return store.Approval{}, false, nil
}

// approvalPayload is the event a chat relay renders as an approval request.
func approvalPayload(a store.Approval, reason string) map[string]any {
	p := map[string]any{
		"approval_id": a.ID, "tool": a.Tool, "subject": a.Subject, "preview": a.Preview,
		"reason": reason, "scopes": a.Scopes, "approvers": a.Approvers, "call_hash": a.CallHash, "instructors": a.Instructors,
		"expires_at": a.ExpiresAt, "always_scope": SuggestedScope(a.Scopes), // what Allow always grants
	}
	if a.NoDeadline() {
		delete(p, "expires_at") // not a zero time a reader could take for one
		p["no_deadline"] = true
	}
	return p
}

// callPreview shows what the call will do: the command for a shell call, a
// diff-like rendering for file edits, the arguments otherwise.
func callPreview(req policy.Request) string {
	var args struct {
		Path      string `json:"path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Edits     []struct {
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		} `json:"edits"`
	}
	var b strings.Builder
	switch req.Call.Tool {
	case "write_file", "edit_file", "multi_edit":
		if json.Unmarshal(req.Call.Args, &args) != nil {
			break
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(req.Call.Args, &raw)
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", args.Path, args.Path)
		if c, ok := raw["content"]; ok {
			var content string
			_ = json.Unmarshal(c, &content)
			writeHunk(&b, "", content)
		}
		if args.OldString != "" || args.NewString != "" {
			writeHunk(&b, args.OldString, args.NewString)
		}
		for _, e := range args.Edits {
			writeHunk(&b, e.OldString, e.NewString)
		}
		return agent.BoundResult(b.String(), maxPreview)
	}
	return agent.BoundResult(req.Preview, maxPreview)
}

func writeHunk(b *strings.Builder, old, new string) {
	b.WriteString("@@\n")
	for _, l := range splitLines(old) {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range splitLines(new) {
		b.WriteString("+" + l + "\n")
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
