package acp

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner/apitype"
	apiclient "reasonix/runner/client"
)

// goalSession is an editor of `reasonix acp --server` with a goal session
// in the service's workspace "app", whose model asks dbQuestion until a
// message holding answered is in the conversation.
func goalSession(t *testing.T, answered string, caps map[string]any) (*service, *client, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := gitRepo(t)
	m := questionModel(t, answered)
	s := startService(t, agenttest.NewScriptedProvider(m, m, m, m, m, m, m, m), repo)
	ed := newClientWith(t, Config{Settings: s.set, Server: s.api(""), Dir: t.TempDir()})
	ed.initializeWith(caps)
	var res struct {
		SessionID string `json:"sessionId"`
	}
	ed.call("session/new", map[string]any{"cwd": repo, "mcpServers": []any{},
		"_meta": map[string]any{"reasonix.io": map[string]any{"goal": true}}}, &res)
	return s, ed, res.SessionID
}

// taskOf is the one task on the service.
func taskOf(t *testing.T, s *service) apitype.Task {
	t.Helper()
	page, err := s.api("").Tasks(t.Context(), apiclient.TaskFilter{})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("tasks on the service: %+v, %v", page, err)
	}
	return page.Tasks[0]
}

// messagesTo are the user messages of task id, as "requester: text".
func messagesTo(t *testing.T, s *service, id string) []string {
	t.Helper()
	evs, err := s.api("").Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		var m struct {
			Role, Requester, Text string
		}
		if isUserMessage(e) && jsonInto(e.Payload, &m) {
			out = append(out, m.Requester+": "+m.Text)
		}
	}
	return out
}

// TestServerGoalQuestionGoOnIsAMessageOnTheService: a service task's goal
// question is a goal-question-<n> card and session/request_permission in
// the editor, not the service's text question answered by the next
// prompt. "Go on with your best judgement" reaches the task as a message
// under the token's principal, and the same prompt follows the resumed
// goal to its end.
func TestServerGoalQuestionGoOnIsAMessageOnTheService(t *testing.T) {
	s, ed, id := goalSession(t, "Nobody will answer that question now", nil)
	stop := ed.promptAsync(id, "set up the service")
	p := awaitPerm(t, ed, stop)
	if tc := string(p.Params.ToolCall.ToolCallId); tc != "goal-question-1" || string(p.Params.SessionId) != id {
		t.Errorf("asked on %q of %s", tc, p.Params.SessionId)
	}
	var opts []string
	for _, o := range p.Params.Options {
		opts = append(opts, string(o.OptionId))
	}
	if strings.Join(opts, ",") != optAnswerLater+","+optGoOn {
		t.Errorf("options %v", opts)
	}
	waitFor(t, func() bool { // the card, announced before the request
		for _, u := range ed.seen(id) {
			if u.Kind == "tool_call" && strings.Contains(string(u.Raw), "goal-question-1") && strings.Contains(string(u.Raw), dbQuestion) {
				return true
			}
		}
		return false
	})
	select {
	case got := <-stop:
		t.Fatalf("the prompt ended (%s) while the question was open", got)
	default:
	}
	p.Reply <- optGoOn
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	task := taskOf(t, s)
	if task.State != apitype.StateSucceeded {
		t.Fatalf("task %s after go on", task.State)
	}
	msgs := messagesTo(t, s, task.ID)
	if len(msgs) != 1 || msgs[0] != "token:admin: "+goOnMessage {
		t.Errorf("messages to the task %q, want go-on from token:admin", msgs)
	}
	if !ed.hasUpdate(id, "agent_message_chunk", "Goal done with the answer.") {
		t.Errorf("the resumed goal was not followed: %q", ed.text(id, "agent_message_chunk"))
	}
}

// TestServerGoalQuestionFormAnswerIsAMessage: a form-capable client gets
// elicitation/create; the accepted answer is the message the goal resumes
// with.
func TestServerGoalQuestionFormAnswerIsAMessage(t *testing.T) {
	s, ed, id := goalSession(t, "use postgres", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	stop := ed.promptAsync(id, "set up the service")
	e := awaitElicit(t, ed, stop)
	if e.Params["sessionId"] != id || e.Params["mode"] != "form" || e.Params["message"] != dbQuestion {
		t.Errorf("elicitation/create %v", e.Params)
	}
	e.Reply <- map[string]any{"action": "accept", "content": map[string]any{"answer": "use postgres"}}
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	task := taskOf(t, s)
	if msgs := messagesTo(t, s, task.ID); task.State != apitype.StateSucceeded || len(msgs) != 1 || msgs[0] != "token:admin: use postgres" {
		t.Errorf("task %s, messages %q", task.State, msgs)
	}
	select {
	case p := <-ed.perms:
		t.Errorf("a permission request as well: %+v", p.Params)
	default:
	}
}

// TestServerGoalQuestionAnswerLaterWaitsForTheNextPrompt: "I'll answer in
// my next message" ends the prompt with the task blocked on its question;
// the next prompt is the answer.
func TestServerGoalQuestionAnswerLaterWaitsForTheNextPrompt(t *testing.T) {
	s, ed, id := goalSession(t, "sqlite, please", nil)
	stop := ed.promptAsync(id, "set up the service")
	p := awaitPerm(t, ed, stop)
	p.Reply <- optAnswerLater
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	task := waitTask(t, s.api(""), taskOf(t, s).ID, apitype.StateBlocked)
	if msgs := messagesTo(t, s, task.ID); len(msgs) != 0 {
		t.Errorf("messages after answer-later: %q", msgs)
	}
	if got := ed.prompt(id, "sqlite, please"); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if task := taskOf(t, s); task.State != apitype.StateSucceeded {
		t.Errorf("task %s after the answer", task.State)
	}
}

// TestServerLoadAsksAnOpenQuestionAndAnElsewhereAnswerWithdrawsIt: loading
// a task blocked on an unanswered question asks it; a second load (another
// editor) whose question is answered through the API meanwhile has its
// request withdrawn, and the task goes on.
func TestServerLoadAsksAnOpenQuestionAndAnElsewhereAnswerWithdrawsIt(t *testing.T) {
	s, ed, id := goalSession(t, "use postgres", nil)
	stop := ed.promptAsync(id, "set up the service")
	awaitPerm(t, ed, stop).Reply <- optAnswerLater
	<-stop
	task := waitTask(t, s.api(""), taskOf(t, s).ID, apitype.StateBlocked)

	other := s.editor("")
	other.call("session/load", map[string]any{"sessionId": task.ID, "mcpServers": []any{}}, nil)
	p := <-other.perms
	if string(p.Params.SessionId) != task.ID || !strings.HasPrefix(string(p.Params.ToolCall.ToolCallId), "goal-question-") {
		t.Fatalf("load asked %+v", p.Params)
	}
	// Answered elsewhere: the open request is cancelled, the task goes on.
	if _, err := s.api("").Message(t.Context(), task.ID, "use postgres"); err != nil {
		t.Fatal(err)
	}
	waitTask(t, s.api(""), task.ID, apitype.StateSucceeded)
	waitFor(t, func() bool { return other.hasUpdate(task.ID, "agent_message_chunk", "Goal done with the answer.") })
	// The withdrawn request was answered "cancelled" by the client and
	// sent nothing more to the task.
	if msgs := messagesTo(t, s, task.ID); len(msgs) != 1 {
		t.Errorf("messages %q", msgs)
	}
}

func jsonInto(raw []byte, v any) bool { return json.Unmarshal(raw, v) == nil }
