package goals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"reasonix/agent"
)

// Goal tool names (tool contract 004).
const (
	toolCreateGoal = "create_goal"
	toolGetGoal    = "get_goal"
	toolUpdateGoal = "update_goal"
)

// update_goal actions.
const (
	actionEdit     = "edit"
	actionPause    = "pause"
	actionResume   = "resume"
	actionComplete = "complete"
	actionBlocked  = "blocked"
)

// goalTools are the goal tools bound to this session.
func (s *session) goalTools() []agent.Tool {
	return []agent.Tool{createGoalTool{s}, getGoalTool{s}, updateGoalTool{s}}
}

// decodeStrict decodes args into v, refusing unknown fields so a misspelt
// argument is reported instead of ignored.
func decodeStrict(tool string, args json.RawMessage, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: invalid arguments: %w", tool, err)
	}
	return nil
}

type createGoalTool struct{ s *session }

func (createGoalTool) Name() string { return toolCreateGoal }
func (createGoalTool) Description() string {
	return "Create and activate a long-running goal. Only for a direct request from a person; it never replaces an unfinished goal."
}
func (createGoalTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"objective":{"type":"string"},"plan_first":{"type":"boolean"}},"required":["objective"],"additionalProperties":false}`)
}

// Execute refuses: a goal run always has an unfinished goal, its own.
func (t createGoalTool) Execute(context.Context, json.RawMessage) (string, error) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return "", fmt.Errorf("create_goal: goal %s is active and unfinished, and a goal is never replaced; use update_goal", t.s.st.Goal.ID)
}

type getGoalTool struct{ s *session }

var _ agent.ReadOnlyTool = getGoalTool{}

func (getGoalTool) Name() string   { return toolGetGoal }
func (getGoalTool) ReadOnly() bool { return true }
func (getGoalTool) Description() string {
	return "Read the current goal: its id, revision, status, contract, plan progress and why it stopped, if it did."
}
func (getGoalTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
}

func (t getGoalTool) Execute(context.Context, json.RawMessage) (string, error) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	st := t.s.st
	view := struct {
		Goal      Goal     `json:"goal"`
		Revision  int      `json:"revision"`
		Status    Status   `json:"status"`
		Phase     Phase    `json:"phase"`
		Turns     int      `json:"turns"`
		Tokens    int      `json:"tokens"`
		OpenItems []string `json:"open_plan_items"`
		Blocked   int      `json:"blocked_reports"`
		Reason    string   `json:"stop_reason,omitempty"`
	}{st.Goal, st.Revision, st.Status, st.Phase, st.Turns, st.Tokens, openItems(st.Plan), len(st.Blocked), st.Reason}
	out, err := json.MarshalIndent(map[string]any{"goal": view}, "", "  ")
	return string(out), err
}

type updateGoalTool struct{ s *session }

func (updateGoalTool) Name() string { return toolUpdateGoal }
func (updateGoalTool) Description() string {
	return "Change the goal, addressed by its exact id and current revision (see the goal block or get_goal). " +
		"Actions: complete (summary required; only when every plan item is completed), blocked (reason and question required: only " +
		"for what a person must decide or provide; when merely stuck, change approach instead), and, in a direct turn from a person only, edit, pause and resume."
}
func (updateGoalTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{
"goal_id":{"type":"string"},
"revision":{"type":"integer"},
"action":{"type":"string","enum":["edit","pause","resume","complete","blocked"]},
"objective":{"type":"string","description":"edit: the new objective"},
"summary":{"type":"string","description":"complete: what was done, verified and assumed"},
"reason":{"type":"string","description":"blocked: what stops the goal"},
"question":{"type":"string","description":"blocked (required): what only the requester can answer"}},
"required":["goal_id","revision","action"],"additionalProperties":false}`)
}

type updateGoalArgs struct {
	GoalID    string `json:"goal_id"`
	Revision  int    `json:"revision"`
	Action    string `json:"action"`
	Objective string `json:"objective"`
	Summary   string `json:"summary"`
	Reason    string `json:"reason"`
	Question  string `json:"question"`
}

func (t updateGoalTool) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var a updateGoalArgs
	if err := decodeStrict(toolUpdateGoal, raw, &a); err != nil {
		return "", err
	}
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if a.GoalID != st.Goal.ID {
		return "", fmt.Errorf("update_goal: goal_id %q is not this run's goal %q; goal turns may only update their own goal", a.GoalID, st.Goal.ID)
	}
	if a.Revision != st.Revision {
		return "", fmt.Errorf("update_goal: revision %d is stale: the goal is at revision %d; read it with get_goal and retry", a.Revision, st.Revision)
	}
	switch a.Action {
	case actionComplete:
		if open := openItems(st.Plan); len(open) > 0 {
			st.RefusedCompletions++
			return "", fmt.Errorf("update_goal: cannot complete: %d plan items are still open: %s. Finish them and mark them completed "+
				"with todo_write (or drop items that are no longer needed), then report completion again", len(open), strings.Join(open, "; "))
		}
		if strings.TrimSpace(a.Summary) == "" {
			return "", errors.New("update_goal: complete needs a summary of what was done, verified and assumed")
		}
		s.report = &goalReport{action: actionComplete, text: strings.TrimSpace(a.Summary)}
		st.Revision++
		return "Goal marked complete. Now give your final answer for the requester.", nil
	case actionBlocked:
		if strings.TrimSpace(a.Reason) == "" {
			return "", errors.New("update_goal: blocked needs a reason")
		}
		if strings.TrimSpace(a.Question) == "" {
			// A goal stops only for a person (seed §3.8); being stuck is a
			// reason to change approach, which the controller keeps going for.
			return "", errors.New("update_goal: blocked needs a question only a person can answer (a decision, access, or information). " +
				"If you are stuck rather than waiting on a person, do not block: try a different approach")
		}
		s.report = &goalReport{action: actionBlocked, text: strings.TrimSpace(a.Reason), question: strings.TrimSpace(a.Question)}
		st.Revision++
		return "Goal marked blocked. Stop working and say briefly what is needed to continue.", nil
	case actionEdit, actionPause, actionResume:
		if !s.human {
			return "", fmt.Errorf("update_goal: %s needs a direct turn from a person; automated goal turns may only complete or block their own goal", a.Action)
		}
	case "continue":
		return "", errors.New("update_goal: the continue action no longer exists; just keep working, the controller continues the goal")
	default:
		return "", fmt.Errorf("update_goal: unknown action %q; want edit, pause, resume, complete or blocked", a.Action)
	}
	switch a.Action {
	case actionEdit:
		obj := strings.TrimSpace(a.Objective)
		if obj == "" || len(obj) > maxGoalText {
			return "", fmt.Errorf("update_goal: edit needs an objective of 1 to %d bytes", maxGoalText)
		}
		st.Goal.Objective = obj
		st.Revision++
		return fmt.Sprintf("Goal objective updated (revision %d).", st.Revision), nil
	case actionPause:
		s.report = &goalReport{action: actionPause}
		st.Revision++
		return "Goal paused; it continues when the requester resumes it.", nil
	}
	return "The goal is already active.", nil
}
