package acp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
)

// maxToolOutput bounds the tool output shown in a tool_call_update; the
// model and the transcript keep the whole result.
const maxToolOutput = 16 << 10

// updatesFor translates one agent event into the session/update
// notifications an editor shows. A tool call is announced (pending) when
// the model asks for it, before the policy decides, so a permission request
// refers to a call the editor already shows.
func updatesFor(cwd string, e agent.Event) []sdk.SessionUpdate {
	switch e.Type {
	case agent.EventTextDelta:
		if e.Text == "" {
			return nil
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(e.Text)}
	case agent.EventMessage:
		if e.Message == nil || e.Message.Role != agent.RoleAssistant {
			return nil
		}
		var out []sdk.SessionUpdate
		for _, c := range e.Message.ToolCalls {
			out = append(out, startCall(cwd, c, sdk.ToolCallStatusPending))
		}
		return out
	case agent.EventToolStarted:
		if e.Call == nil {
			return nil
		}
		return []sdk.SessionUpdate{sdk.UpdateToolCall(sdk.ToolCallId(e.Call.ID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress))}
	case agent.EventToolFinished:
		if e.Call == nil {
			return nil
		}
		status := sdk.ToolCallStatusCompleted
		if e.IsError {
			status = sdk.ToolCallStatusFailed
		}
		return []sdk.SessionUpdate{finishCall(e.Call.ID, status, e.Result)}
	case agent.EventToolRefused:
		if e.Call == nil || e.Verdict == nil {
			return nil
		}
		return []sdk.SessionUpdate{finishCall(e.Call.ID, sdk.ToolCallStatusFailed, e.Verdict.Reason)}
	case agent.EventPlanUpdated:
		// ACP plans are flat: a phase's sub-steps follow it as "phase › step".
		entries := make([]sdk.PlanEntry, 0, len(e.Plan))
		for _, it := range e.Plan {
			entries = append(entries, sdk.PlanEntry{Content: it.Content, Priority: sdk.PlanEntryPriorityMedium, Status: planStatus(it.Status)})
			for _, st := range it.Steps {
				entries = append(entries, sdk.PlanEntry{Content: it.Content + " › " + st.Content, Priority: sdk.PlanEntryPriorityMedium, Status: planStatus(st.Status)})
			}
		}
		return []sdk.SessionUpdate{sdk.UpdatePlan(entries...)}
	}
	return nil
}

func finishCall(id string, status sdk.ToolCallStatus, text string) sdk.SessionUpdate {
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if text != "" {
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(bound(text)))}))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(id), opts...)
}

func bound(s string) string {
	if len(s) <= maxToolOutput {
		return s
	}
	return strings.ToValidUTF8(s[:maxToolOutput], "") + "\n… (output shortened)"
}

// callArgs are the argument fields the built-in tools share.
type callArgs struct {
	Path      string `json:"path"`
	NewPath   string `json:"new_path"`
	Command   string `json:"command"`
	Pattern   string `json:"pattern"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
	Content   string `json:"content"`
}

// startCall announces a tool call with its kind, title, locations and,
// for file edits, the diff it will make.
func startCall(cwd string, c agent.ToolCall, status sdk.ToolCallStatus) sdk.SessionUpdate {
	var args callArgs
	_ = json.Unmarshal([]byte(c.Arguments), &args) // malformed args still get a card
	var raw any
	if json.Unmarshal([]byte(c.Arguments), &raw) != nil {
		raw = c.Arguments
	}
	opts := []sdk.ToolCallStartOpt{
		sdk.WithStartKind(toolKind(c.Name)),
		sdk.WithStartStatus(status),
		sdk.WithStartRawInput(raw),
	}
	if args.Path != "" {
		p := args.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		opts = append(opts, sdk.WithStartLocations([]sdk.ToolCallLocation{{Path: p}}))
		switch c.Name {
		case "edit_file":
			opts = append(opts, sdk.WithStartContent([]sdk.ToolCallContent{sdk.ToolDiffContent(p, args.NewString, args.OldString)}))
		case "write_file":
			opts = append(opts, sdk.WithStartContent([]sdk.ToolCallContent{sdk.ToolDiffContent(p, args.Content)}))
		}
	}
	return sdk.StartToolCall(sdk.ToolCallId(c.ID), callTitle(c.Name, args), opts...)
}

func callTitle(tool string, a callArgs) string {
	subject := a.Path
	switch {
	case a.Command != "":
		subject = a.Command
	case a.Pattern != "":
		subject = a.Pattern
	case a.NewPath != "":
		subject = a.Path + " → " + a.NewPath
	}
	if subject == "" {
		return tool
	}
	line, _, _ := strings.Cut(subject, "\n")
	if len(line) > 120 {
		line = strings.ToValidUTF8(line[:120], "") + "…"
	}
	return tool + ": " + line
}

func toolKind(name string) sdk.ToolKind {
	switch name {
	case "read_file":
		return sdk.ToolKindRead
	case "ls", "glob", "grep", "code_index":
		return sdk.ToolKindSearch
	case "edit_file", "multi_edit", "write_file", "delete_range", "delete_symbol":
		return sdk.ToolKindEdit
	case "move_file":
		return sdk.ToolKindMove
	case "bash":
		return sdk.ToolKindExecute
	case "todo_write":
		return sdk.ToolKindThink
	}
	return sdk.ToolKindOther
}

// replay streams a restored conversation as session/update notifications:
// user messages (a steer shows as the user's own words), the agent's
// answers, and its tool calls with their results.
func (a *Agent) replay(_ context.Context, id string, history []agent.Message) {
	cwd := ""
	a.mu.Lock()
	if l, ok := a.sessions[id]; ok {
		cwd = l.cwd
	}
	a.mu.Unlock()
	for _, m := range history {
		switch m.Role {
		case agent.RoleUser:
			a.notify(id, sdk.UpdateUserMessageText(m.Content))
		case agent.RoleAssistant:
			if m.Content != "" {
				a.notify(id, sdk.UpdateAgentMessageText(m.Content))
			}
			for _, c := range m.ToolCalls {
				a.notify(id, startCall(cwd, c, sdk.ToolCallStatusPending))
			}
		case agent.RoleTool:
			a.notify(id, finishCall(m.ToolCallID, sdk.ToolCallStatusCompleted, m.Content))
		}
	}
}

// planStatus is a plan item's status in ACP's words (pending when unknown).
func planStatus(status string) sdk.PlanEntryStatus {
	st := sdk.PlanEntryStatus(status)
	switch st {
	case sdk.PlanEntryStatusPending, sdk.PlanEntryStatusInProgress, sdk.PlanEntryStatusCompleted:
		return st
	}
	return sdk.PlanEntryStatusPending
}
