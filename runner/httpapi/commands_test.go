package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/mcp/mcptest"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// POST /api/v1/tasks with a command reaches the command lookup: with no
// command defined it is refused as invalid and creates nothing.
func TestCreateTaskWithUnknownCommand(t *testing.T) {
	e := newEnv(t, nil)
	var er struct{ Code, Message string }
	res := e.do("POST", "/api/v1/tasks", `{"command":"review","args":["pkg/foo"]}`, nil, &er)
	want := "unknown command /review; no commands are defined (add .reasonix/commands/NAME.md to the repository)"
	if res.StatusCode != http.StatusBadRequest || er.Code != "invalid" || er.Message != want {
		t.Fatalf("%d %+v", res.StatusCode, er)
	}
	var list struct{ Tasks []any }
	e.do("GET", "/api/v1/tasks", "", nil, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("tasks = %v", list.Tasks)
	}
}

// POST /api/v1/tasks naming an MCP prompt of a [[plugins]] server runs the
// prompt's text; an unknown prompt is refused with the nearest name and
// the model is never asked.
func TestCreateTaskWithMCPPrompt(t *testing.T) {
	srv := mcptest.NewHTTPPromptServer(t, "docs", []mcptest.Prompt{{
		Name: "summarize", Arguments: []string{"path"},
		Text: func(args map[string]string) string { return "Summarize " + args["path"] + " briefly." },
	}})
	set := config.Default()
	set.Plugins = []config.Plugin{{Name: "docs", Type: "http", URL: srv.URL}}
	model := agenttest.NewScriptedProvider(agenttest.Turn{Text: "summarized"})
	e := newEnvWith(t, model, set)

	var er struct{ Code, Message string }
	res := e.do("POST", "/api/v1/tasks", `{"command":"mcp__docs__sumarise","args":["pkg/foo"]}`, nil, &er)
	if res.StatusCode != http.StatusBadRequest || er.Code != "invalid" || !strings.Contains(er.Message, "did you mean /mcp__docs__summarize") {
		t.Fatalf("%d %+v", res.StatusCode, er)
	}
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the model saw %d requests", n)
	}

	var task struct{ ID string }
	res = e.do("POST", "/api/v1/tasks", `{"command":"/mcp__docs__summarize","args":["pkg/foo"]}`, nil, &task)
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("%d %+v", res.StatusCode, task)
	}
	done := runnertest.WaitState(t, e.svc, task.ID, 20*time.Second, store.StateSucceeded)
	if done.Prompt != "Summarize pkg/foo briefly." {
		t.Fatalf("prompt = %q", done.Prompt)
	}
	msgs := model.Requests()[0].Messages
	if got := msgs[len(msgs)-1].Content; got != "Summarize pkg/foo briefly." {
		t.Fatalf("the model saw %q", got)
	}
}
