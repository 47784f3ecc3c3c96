package httpapi_test

import (
	"net/http"
	"testing"
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
