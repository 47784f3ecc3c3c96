package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
	"reasonix/runner/apitype"
)

// taskUpdates translates one event of a task's log (runner's event types,
// SPEC §3) into the session/update notifications an editor shows. The
// payload comes from the service; a payload of an unexpected shape shows
// less, never fails. Sub-agents' tool calls carry their agent's name, so
// their ids never collide with the parent's.
func taskUpdates(cwd string, ev apitype.Event) []sdk.SessionUpdate {
	var p struct {
		Role     string           `json:"role"`
		Text     string           `json:"text"`
		CallID   string           `json:"call_id"`
		Tool     string           `json:"tool"`
		Args     string           `json:"args"`
		Result   string           `json:"result"`
		IsError  bool             `json:"is_error"`
		Reason   string           `json:"reason"`
		Code     string           `json:"code"`
		Subagent string           `json:"subagent"`
		Plan     []agent.TodoItem `json:"plan"`
		State    string           `json:"state"`
		Question string           `json:"question"`
		Decision string           `json:"decision"`
		Approval string           `json:"approval_id"`
		By       string           `json:"approver"`
		Summary  string           `json:"summary"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil {
		return nil
	}
	id := p.CallID
	if p.Subagent != "" {
		id = p.Subagent + "/" + p.CallID
	}
	switch ev.Type {
	case "message":
		if p.Text == "" {
			return nil
		}
		if p.Role == "user" {
			return []sdk.SessionUpdate{sdk.UpdateUserMessageText(p.Text)}
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(p.Text)}
	case "tool_started":
		if p.CallID == "" {
			return nil
		}
		u := startCall(cwd, agent.ToolCall{ID: id, Name: p.Tool, Arguments: p.Args}, sdk.ToolCallStatusInProgress)
		if p.Subagent != "" && u.ToolCall != nil {
			u.ToolCall.Title = "[" + p.Subagent + "] " + u.ToolCall.Title
		}
		return []sdk.SessionUpdate{u}
	case "tool_finished":
		if p.CallID == "" {
			return nil
		}
		status := sdk.ToolCallStatusCompleted
		if p.IsError {
			status = sdk.ToolCallStatusFailed
		}
		return []sdk.SessionUpdate{finishCall(id, status, p.Result)}
	case "tool_refused":
		if p.CallID == "" {
			return nil
		}
		// A refused call never started: it is announced failed at once.
		return []sdk.SessionUpdate{sdk.StartToolCall(sdk.ToolCallId(id), callTitle(p.Tool, callArgs{}),
			sdk.WithStartKind(toolKind(p.Tool)), sdk.WithStartStatus(sdk.ToolCallStatusFailed),
			sdk.WithStartContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(bound(p.Reason)))}))}
	case "plan_updated":
		return updatesFor(cwd, agent.Event{Type: agent.EventPlanUpdated, Plan: p.Plan})
	case "task_state":
		if p.State == "" {
			return nil
		}
		line := "Task " + strings.ReplaceAll(p.State, "_", " ")
		if p.Reason != "" {
			line += " (" + p.Reason + ")"
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(line + "\n")}
	case "question":
		if p.Question == "" {
			return nil
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText("\nQuestion: " + p.Question + "\n")}
	case "approval_decided":
		if p.Decision == "" {
			return nil
		}
		line := fmt.Sprintf("Approval %s: %s", p.Approval, strings.ReplaceAll(p.Decision, "_", " "))
		if p.By != "" {
			line += " by " + p.By
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(line + "\n")}
	case "final_report":
		if p.Summary == "" {
			return nil
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText("Report: " + bound(p.Summary) + "\n")}
	}
	return nil
}
