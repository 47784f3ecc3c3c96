package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/internal/testenv"
)

// TestACPConformance drives the built binary with the official ACP
// TypeScript SDK (acp/conformance/conformance.mjs): initialize,
// new/prompt with streamed updates, a permission allowed and one
// rejected, steer mid-turn and without a prompt, cancel mid-turn, two
// sessions at once, an MCP server passed in session/new, a thought chunk
// and the max_tokens stop reason, list, close,
// load with replay, resume, delete. The script checks what the client
// sees; this test checks what the model was sent.
func TestACPConformance(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, testenv.ACPClient, "node is not installed (apt-get install nodejs npm)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "acp", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		testenv.Missing(t, testenv.ACPClient, "@agentclientprotocol/sdk is not installed: run `npm ci` in acp/conformance")
	}
	e := newE2E(t,
		toolTurn(call("w1", "write_file", `{"path":"a.txt","content":"a\n"}`)), answer("wrote it"),
		toolTurn(call("w2", "write_file", `{"path":"b.txt","content":"b\n"}`)), answer("ok, not written"),
		toolTurn(call("w3", "write_file", `{"path":"c.txt","content":"c\n"}`)), answer("steered"),
		agenttest.Turn{Text: "think think think", Stall: true},
		answer("same"), answer("same"),
		toolTurn(call("m1", "mcp__ex__echo", `{"text":"from the plugin"}`)), answer("echoed"),
		agenttest.Turn{Thinking: "pondering the plugin", Text: "cut", FinishReason: "length"},
	)
	work2 := t.TempDir()
	cmd := exec.Command(node, filepath.Join(dir, "conformance.mjs"), binary, e.work, work2, plugin)
	cmd.Dir = dir
	cmd.Env = baseEnv(e.home)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the conformance script failed: %v", err)
	}
	// The steer reached the model as a user message in the request after
	// the approved call, which was the turn's next model call.
	reqs := e.srv.Requests()
	if len(reqs) < 6 {
		t.Fatalf("%d model requests, want at least 6", len(reqs))
	}
	last := reqs[5].Messages[len(reqs[5].Messages)-1]
	if last.Role != agent.RoleUser || !strings.HasPrefix(last.Content, "STEER:") {
		t.Errorf("the request after the steered call ends with %+v, want the steer", last)
	}
	for _, r := range reqs[7:9] {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "write a.txt") {
				t.Errorf("a new session's request carries another session's history: %+v", r.Messages)
			}
		}
	}
}

// TestACPConformanceServer drives `reasonix acp --server` with the
// official ACP TypeScript SDK (acp/conformance/server.mjs) against a real
// `reasonix serve`: a task started through the API is listed, loaded
// (replayed, then followed live), and its approval, asked in the client,
// is allowed there and decided on the service by the token's principal.
func TestACPConformanceServer(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, testenv.ACPClient, "node is not installed (apt-get install nodejs npm)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "acp", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		testenv.Missing(t, testenv.ACPClient, "@agentclientprotocol/sdk is not installed: run `npm ci` in acp/conformance")
	}
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"needs approval": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("result: " + res)
			}
			return toolTurn(call("a1", "bash", `{"command":"echo approved-run > proof.txt && cat proof.txt"}`))
		},
		// A goal that asks which database until told to go on.
		"pick a database": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				if strings.Contains(res, "marked complete") {
					return answer("Goal done on my best judgement.")
				}
				return answer("Waiting for an answer.")
			}
			id, rev := goalRef(t, req)
			for _, m := range req.Messages {
				if m.Role == agent.RoleUser && strings.Contains(m.Content, "Nobody will answer that question now") {
					return toolTurn(call("g2", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"chose SQLite"}`, id, rev)))
				}
			}
			return toolTurn(call("g1", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"blocked","reason":"no database chosen","question":"Which database should the service use?"}`, id, rev)))
		},
	})...)
	s := e.serve(t)
	id := s.submit("this task needs approval", nil)
	s.waitState(id, "waiting_approval")
	goal := s.submit("pick a database for the service", map[string]any{"goal": true})
	s.waitState(goal, "blocked")
	cmd := exec.Command(node, filepath.Join(dir, "server.mjs"), binary, e.work, s.url, id, goal)
	cmd.Dir = dir
	cmd.Env = baseEnv(e.home)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the conformance script failed: %v", err)
	}
	got := s.waitState(id, "succeeded", "failed", "blocked")
	if got.State != "succeeded" || !strings.Contains(got.Result.FinalAnswer, "approved-run") {
		t.Fatalf("after the client's approval: %+v\n%s", got, s.events(id))
	}
	var list struct{ Approvals []approval }
	s.call("GET", "/api/v1/approvals?task="+id, nil, &list)
	if len(list.Approvals) != 1 || list.Approvals[0].State != "allowed" || list.Approvals[0].DecidedBy != "token:admin" {
		t.Fatalf("the approval on the service: %+v", list.Approvals)
	}
	// The goal's question, answered "go on" in the client, reached the
	// task as the admin token's message, and the goal completed.
	if got := s.waitState(goal, "succeeded", "failed", "blocked"); got.State != "succeeded" ||
		!strings.Contains(s.events(goal), `"requester":"token:admin","role":"user","text":"Nobody will answer that question now`) {
		t.Fatalf("the goal after the client's go-on: %+v\n%s", got, s.events(goal))
	}
}

// TestACPConformanceTerminal drives the built binary with the official
// ACP TypeScript SDK as an editor with terminals
// (acp/conformance/terminal.mjs): its terminal/create runs the `reasonix
// acp attach` it is given, which shows the bash call's output and exits
// with its status; the call's card shows the terminal; it is released.
// This test checks the model got the same output.
func TestACPConformanceTerminal(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, testenv.ACPClient, "node is not installed (apt-get install nodejs npm)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "acp", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		testenv.Missing(t, testenv.ACPClient, "@agentclientprotocol/sdk is not installed: run `npm ci` in acp/conformance")
	}
	e := newE2E(t, toolTurn(call("b1", "bash", `{"command":"echo out; echo err >&2; exit 3"}`)), answer("ran it"))
	cmd := exec.Command(node, filepath.Join(dir, "terminal.mjs"), binary, e.work)
	cmd.Dir = dir
	cmd.Env = baseEnv(e.home)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the terminal script failed: %v", err)
	}
	var result string
	for _, r := range e.srv.Requests() {
		for _, m := range r.Messages {
			if m.ToolCallID == "b1" {
				result = m.Content
			}
		}
	}
	if result != "out\nerr\nexit code: 3" {
		t.Errorf("the model got %q", result)
	}
}
