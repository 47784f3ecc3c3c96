package acp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/runner/apitype"
	apiclient "reasonix/runner/client"
)

// The options of a task's permission request besides allow_once and
// reject (optAllowOnce, optReject).
const (
	optAllowTask   = "allow_task"
	optStopPublish = "stop_publish"
)

// pendingApproval is what the editor is asked about: from an
// approval_requested event or the service's list of pending approvals.
type pendingApproval struct {
	ID          string   `json:"approval_id"`
	Tool        string   `json:"tool"`
	Subject     string   `json:"subject"`
	Preview     string   `json:"preview"`
	Reason      string   `json:"reason"`
	Scopes      []string `json:"scopes"`
	CallHash    string   `json:"call_hash"`
	AlwaysScope string   `json:"always_scope"`
}

func approvalOf(payload json.RawMessage) (pendingApproval, bool) {
	var a pendingApproval
	if json.Unmarshal(payload, &a) != nil || a.ID == "" || a.CallHash == "" {
		return pendingApproval{}, false
	}
	return a, true
}

// askPending asks the editor about the task's approvals still waiting for
// a decision (those requested before the session followed the task).
func (s *rsession) askPending(ctx context.Context) {
	s.mu.Lock()
	task := s.task
	s.mu.Unlock()
	list, err := s.r.c.Approvals(ctx, apiclient.ApprovalFilter{State: apitype.ApprovalPending, TaskID: task, Limit: 100})
	if err != nil {
		s.r.a.cfg.Logger.Warn("acp: listing the task's pending approvals", "task", task, "err", err)
		return
	}
	for _, a := range list {
		s.ask(pendingApproval{ID: a.ID, Tool: a.Tool, Subject: a.Subject, Preview: a.Preview, Scopes: a.Scopes,
			CallHash: a.CallHash, AlwaysScope: a.AlwaysScope})
	}
}

// ask puts approval a to the editor as session/request_permission, once
// per approval, and decides it through the API as the token's principal
// with the call's hash, so the decision cannot apply to another call. The
// service applies its rules (no self-approval, the task's approvers, the
// grant role for allow always); a refusal is shown in the session. An
// approval decided elsewhere meanwhile withdraws the request.
func (s *rsession) ask(a pendingApproval) {
	s.mu.Lock()
	if _, done := s.asked[a.ID]; done || s.closed {
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.asked[a.ID] = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer func() {
			cancel()
			s.mu.Lock()
			s.asked[a.ID] = nil // asked; never again
			s.mu.Unlock()
		}()
		choice, ok := s.request(ctx, a)
		if !ok {
			return
		}
		d := apitype.DecideRequest{CallHash: a.CallHash}
		switch choice {
		case optAllowOnce:
			d.Decision = apitype.AllowOnce
		case optAllowTask:
			d.Decision, d.Scope = apitype.AllowTask, a.Scopes[0]
		case optAllowAlways:
			d.Decision, d.Scope = apitype.AllowAlways, a.AlwaysScope
		case optStopPublish:
			d.Decision = apitype.StopPublish
		default:
			d.Decision = apitype.Deny
		}
		if _, err := s.r.c.Decide(s.ctx, a.ID, d); err != nil && s.ctx.Err() == nil {
			s.say("The service did not take your decision on " + a.Tool + " (approval " + a.ID + "): " + refusal(err))
		}
	}()
}

// request asks the editor; ok is false when the request was withdrawn,
// cancelled or failed (the approval stays pending for others).
func (s *rsession) request(ctx context.Context, a pendingApproval) (string, bool) {
	var opts []sdk.PermissionOption
	if a.Tool == "budget" {
		opts = []sdk.PermissionOption{
			{OptionId: optAllowOnce, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Add the budget again and continue"},
			{OptionId: optStopPublish, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Stop and publish"},
			{OptionId: optReject, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Stop"},
		}
	} else {
		opts = []sdk.PermissionOption{{OptionId: optAllowOnce, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once"}}
		if len(a.Scopes) > 0 {
			opts = append(opts, sdk.PermissionOption{OptionId: optAllowTask, Kind: sdk.PermissionOptionKindAllowAlways,
				Name: "Allow for the rest of this task (" + a.Scopes[0] + ")"})
		}
		if a.AlwaysScope != "" {
			opts = append(opts, sdk.PermissionOption{OptionId: optAllowAlways, Kind: sdk.PermissionOptionKindAllowAlways,
				Name: "Allow always in later tasks too (" + a.AlwaysScope + ")"})
		}
		opts = append(opts, sdk.PermissionOption{OptionId: optReject, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject"})
	}
	kind := toolKind(a.Tool)
	status := sdk.ToolCallStatusPending
	titleText := a.Tool
	if a.Subject != "" {
		line, _, _ := strings.Cut(a.Subject, "\n")
		titleText += ": " + line
	}
	var content []sdk.ToolCallContent
	if why := strings.TrimSpace(a.Reason); why != "" {
		content = append(content, sdk.ToolContent(sdk.TextBlock("Needs your approval: "+why)))
	}
	if a.Preview != "" {
		content = append(content, sdk.ToolContent(sdk.TextBlock(bound(a.Preview))))
	}
	resp, err := sdk.SendRequest[sdk.RequestPermissionResponse](s.r.a.conn, ctx, "session/request_permission", sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(s.id),
		ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId("approval:" + a.ID), Title: &titleText, Kind: &kind,
			Status: &status, Content: content},
		Options: opts,
		Meta:    map[string]any{"reasonix.io": map[string]any{"approvalId": a.ID, "callHash": a.CallHash}},
	})
	if err != nil || resp.Outcome.Selected == nil || ctx.Err() != nil {
		return "", false
	}
	id := string(resp.Outcome.Selected.OptionId)
	for _, o := range opts {
		if string(o.OptionId) == id {
			return id, true
		}
	}
	return optReject, true // an option we did not offer decides nothing in its favour
}
