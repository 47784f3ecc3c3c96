package acp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
	"reasonix/policy"
)

// The options of a permission request.
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optReject      = "reject"
)

// EventApproval is recorded in the session's transcript for each decision
// the editor's user made: who decided (the editor, as it named itself in
// initialize), on which call, and what.
const EventApproval agent.EventType = "approval_decided"

// Approval is the Data of an EventApproval.
type Approval struct {
	Tool      string `json:"tool"`
	CallID    string `json:"call_id"`
	Subject   string `json:"subject,omitempty"`
	Choice    string `json:"choice"` // allow_once | allow_always | reject
	Scope     string `json:"scope,omitempty"`
	DecidedBy string `json:"decided_by"`
}

// approve is the session's policy.Approver: a call the policy says needs a
// person becomes session/request_permission. "Allow always" grants the
// policy's best scope for the rest of this session only; an explicit ask
// rule offers no scope, so only allow once or reject.
func (l *live) approve(ctx context.Context, req policy.Request) (policy.Answer, error) {
	opts := []sdk.PermissionOption{{OptionId: optAllowOnce, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once"}}
	if len(req.Scopes) > 0 {
		opts = append(opts, sdk.PermissionOption{OptionId: optAllowAlways, Kind: sdk.PermissionOptionKindAllowAlways,
			Name: "Allow always in this session (" + req.Scopes[0] + ")"})
	}
	opts = append(opts, sdk.PermissionOption{OptionId: optReject, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject"})

	kind := toolKind(req.Call.Tool)
	status := sdk.ToolCallStatusPending
	titleText := req.Call.Tool
	if req.Subject != "" {
		titleText += ": " + req.Subject
	}
	var content []sdk.ToolCallContent
	if why := strings.TrimSpace(req.Reason); why != "" {
		content = append(content, sdk.ToolContent(sdk.TextBlock("Needs your approval: "+why)))
	}
	if req.Preview != "" {
		content = append(content, sdk.ToolContent(sdk.TextBlock(req.Preview)))
	}
	resp, err := sdk.SendRequest[sdk.RequestPermissionResponse](l.a.conn, ctx, "session/request_permission", sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(l.id),
		ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(req.Call.ID), Title: &titleText, Kind: &kind,
			Status: &status, Content: content},
		Options: opts,
	})
	if err != nil {
		if ctx.Err() != nil {
			return policy.Answer{}, context.Cause(ctx)
		}
		return policy.Answer{}, fmt.Errorf("%w: the editor did not answer the permission request (%v)", policy.ErrUnattended, err)
	}
	ans, choice := policy.Answer{Choice: policy.Decline}, optReject
	if sel := resp.Outcome.Selected; sel != nil {
		switch string(sel.OptionId) {
		case optAllowOnce:
			ans, choice = policy.Answer{Choice: policy.AllowOnce}, optAllowOnce
		case optAllowAlways:
			if len(req.Scopes) > 0 {
				ans, choice = policy.Answer{Choice: policy.AllowForTask, Scope: req.Scopes[0]}, optAllowAlways
			}
		}
	} else if ctx.Err() != nil {
		// The client answered "cancelled" because the turn was.
		return policy.Answer{}, context.Cause(ctx)
	}
	l.observe(agent.Event{Type: EventApproval, Data: Approval{
		Tool: req.Call.Tool, CallID: req.Call.ID, Subject: req.Subject, Choice: choice, Scope: ans.Scope,
		DecidedBy: "acp:" + l.a.clientName(),
	}})
	return ans, nil
}
