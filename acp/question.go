package acp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
)

// A goal that needs information only a person has stops with a question
// (goals.StatusQuestion, or a blocked goal whose audit asks how to go on).
// In the editor the question is asked in the UI and the goal goes on with
// the answer, in the same session/prompt:
//
//   - a client that advertises form elicitation (clientCapabilities
//     .elicitation.form, still unstable in ACP) gets elicitation/create
//     with one required text field, and the answer resumes the goal;
//   - every other client gets session/request_permission on a "question"
//     tool call: "Go on with your best judgement" resumes the goal telling
//     the model nobody answered, "I'll answer in my next message" ends the
//     turn with the question and the goal waits for the next prompt, whose
//     text is the answer.
//
// A declined or cancelled elicitation is the second case too.

// EventGoalAnswer is recorded in the session's transcript when the
// editor's user answered a goal's question: who answered and what.
const EventGoalAnswer agent.EventType = "goal_answered"

// GoalAnswer is the Data of an EventGoalAnswer.
type GoalAnswer struct {
	Question string `json:"question"`
	// Answer is the person's text; "" when they let the goal go on with
	// its best judgement.
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answered_by"`
}

// The options of a goal question asked as a permission request.
const (
	optGoOn        = "go_on"
	optAnswerLater = "answer_later"
)

// goOnMessage resumes a goal whose question the person chose not to
// answer.
const goOnMessage = "Nobody will answer that question now. Go on with your best judgement: choose the most " +
	"reasonable option, say which one you chose and why, and keep going."

// askGoal asks the editor's user a goal's question. ok is false when the
// person will answer later (or the client could not ask); answer is then
// "". A person who let the goal go on gets goOnMessage as the answer.
func (l *live) askGoal(ctx context.Context, question string) (answer string, ok bool) {
	answer, goOn, ok := l.a.askQuestion(ctx, l.id, &l.questions, question)
	if !ok {
		return "", false
	}
	if goOn {
		l.recordAnswer(question, "")
	} else {
		l.recordAnswer(question, answer)
	}
	return answer, true
}

// askQuestion puts a goal's question to the editor's user in session:
// elicitation/create for a form-capable client, else a goal-question-<n>
// card (n from seq) and session/request_permission. ok is false when the
// person will answer later, declined the form, or the client could not
// ask; goOn when they let the goal go on, answer then being goOnMessage.
// Both backends use it: a local goal resumes with the answer, a service
// task gets it as a message.
func (a *Agent) askQuestion(ctx context.Context, session string, seq *atomic.Int64, question string) (answer string, goOn, ok bool) {
	if ctx.Err() != nil {
		return "", false, false
	}
	if a.clientCaps().elicitForm {
		answer, ok := a.elicit(ctx, session, question)
		return answer, false, ok
	}
	n := seq.Add(1)
	id := sdk.ToolCallId("goal-question-" + strconv.FormatInt(n, 10))
	a.notify(session, sdk.StartToolCall(id, "The goal asks: "+firstLine(question),
		sdk.WithStartKind(sdk.ToolKindThink), sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(question))})))
	resp, err := sdk.SendRequest[sdk.RequestPermissionResponse](a.conn, ctx, "session/request_permission", sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(session),
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: id},
		Options: []sdk.PermissionOption{
			{OptionId: optAnswerLater, Kind: sdk.PermissionOptionKindRejectOnce, Name: "I'll answer in my next message"},
			{OptionId: optGoOn, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Go on with your best judgement"},
		},
	})
	goOn = err == nil && resp.Outcome.Selected != nil && string(resp.Outcome.Selected.OptionId) == optGoOn && ctx.Err() == nil
	status := sdk.ToolCallStatusCompleted
	if !goOn {
		status = sdk.ToolCallStatusFailed
	}
	a.notify(session, sdk.UpdateToolCall(id, sdk.WithUpdateStatus(status)))
	if !goOn {
		return "", false, false
	}
	return goOnMessage, true, true
}

// elicitRequest is elicitation/create in form mode, scoped to the session.
type elicitRequest struct {
	SessionID       string       `json:"sessionId"`
	Mode            string       `json:"mode"`
	Message         string       `json:"message"`
	RequestedSchema elicitSchema `json:"requestedSchema"`
}

type elicitSchema struct {
	Type       string                    `json:"type"`
	Properties map[string]elicitProperty `json:"properties"`
	Required   []string                  `json:"required"`
}

type elicitProperty struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

type elicitResponse struct {
	Action  string                     `json:"action"`
	Content map[string]json.RawMessage `json:"content"`
}

// elicit asks the question as a one-field form. Only an accepted form
// with a non-empty text answer counts.
func (a *Agent) elicit(ctx context.Context, session, question string) (string, bool) {
	resp, err := sdk.SendRequest[elicitResponse](a.conn, ctx, "elicitation/create", elicitRequest{
		SessionID: session, Mode: "form", Message: question,
		RequestedSchema: elicitSchema{Type: "object", Required: []string{"answer"}, Properties: map[string]elicitProperty{
			"answer": {Type: "string", Title: "Your answer", Description: "The goal goes on with it."},
		}},
	})
	if err != nil || ctx.Err() != nil || resp.Action != "accept" {
		if err != nil {
			a.cfg.Logger.Debug("acp: elicitation/create", "session", session, "err", err)
		}
		return "", false
	}
	var answer string
	if json.Unmarshal(resp.Content["answer"], &answer) != nil || strings.TrimSpace(answer) == "" {
		return "", false
	}
	return strings.TrimSpace(answer), true
}

func (l *live) recordAnswer(question, answer string) {
	l.observe(agent.Event{Type: EventGoalAnswer, Data: GoalAnswer{Question: question, Answer: answer, AnsweredBy: "acp:" + l.a.clientName()}})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(line) > 120 {
		cut := 120
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}
