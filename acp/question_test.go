package acp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

const dbQuestion = "Which database should the service use?"

// questionModel blocks its goal on dbQuestion until a person's message
// holding answered is in the conversation, then completes it.
func questionModel(t *testing.T, answered string) agenttest.Turn {
	return agenttest.Turn{Handler: func(r agenttest.Request) agenttest.Turn {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == agent.RoleTool {
			if strings.Contains(last.Content, "marked complete") {
				return agenttest.Turn{Text: "Goal done with the answer."}
			}
			return agenttest.Turn{Text: "I need an answer first."}
		}
		knows := false
		for _, m := range r.Messages {
			if m.Role == agent.RoleUser && strings.Contains(m.Content, answered) {
				knows = true
			}
		}
		for i := len(r.Messages) - 1; i >= 0; i-- {
			m := goalTag.FindStringSubmatch(r.Messages[i].Content)
			if m == nil {
				continue
			}
			if knows {
				return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "update_goal",
					Arguments: fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"used the answer"}`, m[1], m[2])}}}
			}
			return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "q1", Name: "update_goal",
				Arguments: fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"blocked","reason":"no database chosen","question":%q}`, m[1], m[2], dbQuestion)}}}
		}
		t.Errorf("a goal turn without the goal block: %+v", r.Messages)
		return agenttest.Turn{Text: "?"}
	}}
}

// awaitPerm is the next permission request, failing the test when the
// turn ends without one.
func awaitPerm(t *testing.T, c *client, stop <-chan string) permission {
	t.Helper()
	select {
	case p := <-c.perms:
		return p
	case s := <-stop:
		t.Fatalf("the turn ended (%s) without asking", s)
	}
	return permission{}
}

// awaitElicit is the next elicitation, failing the test when the turn
// ends without one.
func awaitElicit(t *testing.T, c *client, stop <-chan string) elicitation {
	t.Helper()
	select {
	case e := <-c.elicits:
		return e
	case s := <-stop:
		t.Fatalf("the turn ended (%s) without asking", s)
	}
	return elicitation{}
}

func (c *client) transcript(id string) string {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "sessions", id, "transcript.jsonl"))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

// sawUser reports whether some model request carried a user message
// containing s.
func sawUser(reqs []agenttest.Request, s string) bool {
	for _, r := range reqs {
		for _, m := range r.Messages {
			if m.Role == agent.RoleUser && strings.Contains(m.Content, s) {
				return true
			}
		}
	}
	return false
}

func TestGoalQuestionIsAskedAndTheNextPromptAnswersIt(t *testing.T) {
	m := questionModel(t, "use postgres")
	c := newClient(t, m, m, m, m, m, m)
	c.initialize()
	id := c.newSession(t.TempDir())
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "goal"}, nil)
	stop := c.promptAsync(id, "set up the service")
	p := awaitPerm(t, c, stop)
	if tc := string(p.Params.ToolCall.ToolCallId); !strings.HasPrefix(tc, "goal-question-") {
		t.Errorf("the question is asked on tool call %q", tc)
	}
	var opts []string
	for _, o := range p.Params.Options {
		opts = append(opts, string(o.OptionId))
	}
	if strings.Join(opts, ",") != optAnswerLater+","+optGoOn {
		t.Errorf("options %v", opts)
	}
	// The question card was announced before the request, with the text
	// (the client may handle the request before the notification queue).
	waitFor(t, func() bool {
		for _, u := range c.seen(id) {
			if u.Kind == "tool_call" && strings.Contains(string(u.Raw), dbQuestion) {
				return true
			}
		}
		return false
	})
	p.Reply <- optAnswerLater
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := c.text(id, "agent_message_chunk"); !strings.Contains(got, dbQuestion) {
		t.Errorf("the turn did not end with the question: %q", got)
	}
	asked := len(c.prov.Requests())
	// The next goal prompt is the answer: the same goal goes on with it.
	if got := c.prompt(id, "use postgres"); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	reqs := c.prov.Requests()[asked:]
	if !sawUser(reqs, "use postgres") {
		t.Fatalf("the answer never reached the model: %+v", reqs)
	}
	if got := c.text(id, "agent_message_chunk"); !strings.Contains(got, "Goal done with the answer.") {
		t.Errorf("the answered goal did not complete: %q", got)
	}
	// The resumed goal is the one that asked: its goal block has the same id.
	first := goalTag.FindStringSubmatch(c.prov.Requests()[0].Messages[len(c.prov.Requests()[0].Messages)-1].Content)
	var resumed []string
	for _, r := range reqs {
		for _, m := range r.Messages {
			if g := goalTag.FindStringSubmatch(m.Content); g != nil {
				resumed = g
			}
		}
	}
	if first == nil || resumed == nil || first[1] != resumed[1] {
		t.Errorf("the answer started goal %v, want the asking goal %v", resumed, first)
	}
	if tr := c.transcript(id); !strings.Contains(tr, `"type":"goal_answered"`) || !strings.Contains(tr, `"answered_by":"acp:testeditor"`) {
		t.Errorf("the transcript does not record who answered:\n%s", tr)
	}
}

func TestGoalQuestionGoOnContinuesTheSameTurn(t *testing.T) {
	m := questionModel(t, "Nobody will answer that question now")
	c := newClient(t, m, m, m, m, m, m)
	c.initialize()
	id := c.newSession(t.TempDir())
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "goal"}, nil)
	stop := c.promptAsync(id, "set up the service")
	p := awaitPerm(t, c, stop)
	p.Reply <- optGoOn
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := c.text(id, "agent_message_chunk"); !strings.Contains(got, "Goal done with the answer.") || strings.Contains(got, dbQuestion) {
		t.Errorf("the goal did not go on past its question: %q", got)
	}
	if !sawUser(c.prov.Requests(), goOnMessage) {
		t.Error("the model was not told to go on with its best judgement")
	}
}

func TestGoalQuestionIsAFormWhenTheClientElicits(t *testing.T) {
	m := questionModel(t, "sqlite, please")
	c := newClient(t, m, m, m, m, m, m)
	c.initializeWith(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	id := c.newSession(t.TempDir())
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "goal"}, nil)
	stop := c.promptAsync(id, "set up the service")
	e := awaitElicit(t, c, stop)
	if e.Params["sessionId"] != id || e.Params["mode"] != "form" || e.Params["message"] != dbQuestion {
		t.Errorf("elicitation/create %v", e.Params)
	}
	schema, _ := e.Params["requestedSchema"].(map[string]any)
	if props, _ := schema["properties"].(map[string]any); props["answer"] == nil {
		t.Errorf("the form has no answer field: %v", schema)
	}
	e.Reply <- map[string]any{"action": "accept", "content": map[string]any{"answer": "sqlite, please"}}
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := c.text(id, "agent_message_chunk"); !strings.Contains(got, "Goal done with the answer.") {
		t.Errorf("the goal did not go on with the answer: %q", got)
	}
	if !sawUser(c.prov.Requests(), "sqlite, please") {
		t.Error("the answer never reached the model")
	}
	select {
	case p := <-c.perms:
		t.Errorf("a permission request as well: %+v", p.Params)
	default:
	}
}

func TestGoalQuestionDeclinedFormWaitsForTheNextPrompt(t *testing.T) {
	m := questionModel(t, "later answer")
	c := newClient(t, m, m, m, m, m, m)
	c.initializeWith(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	id := c.newSession(t.TempDir())
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "goal"}, nil)
	stop := c.promptAsync(id, "set up the service")
	e := awaitElicit(t, c, stop)
	e.Reply <- map[string]any{"action": "decline"}
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := c.text(id, "agent_message_chunk"); !strings.Contains(got, dbQuestion) {
		t.Errorf("the turn did not end with the question: %q", got)
	}
	if got := c.prompt(id, "later answer"); got != "end_turn" {
		t.Fatal(got)
	}
	if got := c.text(id, "agent_message_chunk"); !strings.Contains(got, "Goal done with the answer.") {
		t.Errorf("the next prompt did not answer the goal: %q", got)
	}
}
