package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// A 300-step goal against a model with an 8,000-token window: the run
// compacts several times and completes; its last request still carries the
// system prompt, the goal and the recent tail; the transcript keeps every
// step and the checkpoints.
func TestRunGoalCompactsInASmallWindow(t *testing.T) {
	const window, steps, perTurn = 8000, 300, 50
	var next, summaries atomic.Int64
	var e *e2e
	e = newE2E(t, goalScript(steps+steps/perTurn+60, agenttest.Windowed(window, func(req agenttest.Request) agenttest.Turn {
		if agenttest.IsSummary(req) {
			summaries.Add(1)
			return agenttest.Turn{Text: "## Goal and constraints\nRead every file.\n\n## Done so far\nRead files in order.\n\n## Next steps\nRead the rest."}
		}
		n := int(next.Add(1)) - 1
		read, done := n-n/(perTurn+1), n%(perTurn+1) == perTurn
		switch {
		case read >= steps && strings.Contains(lastToolResult(req), "complete"):
			return agenttest.Turn{Text: "read all 300 files"}
		case read >= steps:
			id, rev := goalRef(t, req)
			return agenttest.Turn{ToolCalls: []agent.ToolCall{call("done", "update_goal", fmt.Sprintf(`{"goal_id":%q,"revision":%s,"action":"complete","summary":"read every file"}`, id, rev))}}
		case done:
			return agenttest.Turn{Text: "a turn's worth of files read; continuing"}
		}
		return agenttest.Turn{ToolCalls: []agent.ToolCall{call(fmt.Sprintf("r%d", read), "read_file", fmt.Sprintf(`{"path":"file_%03d.txt"}`, read))}}
	}))...)
	// Only the built-in it calls: every other tool's schema would take room
	// in the small window's cached prefix.
	e.configure(fmt.Sprintf("context_window = %d\n\n[tools]\nenabled = [\"read_file\"]\n", window))
	for i := range steps {
		body := fmt.Sprintf("file %03d begins\n%s\nfile %03d ends\n", i, strings.Repeat("some text of the file\n", 25), i)
		if err := os.WriteFile(filepath.Join(e.work, fmt.Sprintf("file_%03d.txt", i)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code := e.run("run", "--goal", "--json", "read every file_NNN.txt in order")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, tail(stderr, 3000))
	}
	compacted := strings.Count(stderr, "context compacted (summary)")
	if compacted < 3 || int(summaries.Load()) != compacted {
		t.Fatalf("%d compactions shown, %d summary calls\n%s", compacted, summaries.Load(), tail(stderr, 3000))
	}
	reqs := e.srv.Requests()
	last := reqs[len(reqs)-1]
	if last.Messages[0].Role != agent.RoleSystem || !goalTag.MatchString(last.Messages[1].Content) ||
		!strings.Contains(last.Messages[1].Content, "read every file_NNN.txt in order") {
		t.Fatalf("last request opens with %.100q / %.300q", last.Messages[0].Content, last.Messages[1].Content)
	}
	if !strings.Contains(last.Messages[2].Content, "<context-digest>") {
		t.Fatalf("no digest after the goal: %.200q", last.Messages[2].Content)
	}
	var sawLastFile bool
	for _, m := range last.Messages[3:] {
		sawLastFile = sawLastFile || strings.Contains(m.Content, fmt.Sprintf("file %03d ends", steps-1))
	}
	if !sawLastFile {
		t.Fatal("the recent tail is missing from the last request")
	}

	var res struct{ Transcript string }
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Transcript == "" {
		t.Fatalf("result %s: %v", stdout, err)
	}
	f, err := os.Open(res.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msgs, err := agent.ReadTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	reads, marks := 0, 0
	for _, m := range msgs {
		switch {
		case m.Role == agent.RoleTool && m.Name == "read_file":
			reads++
		case m.Role == agent.RoleCheckpoint:
			marks++
		}
	}
	if reads != steps || marks != compacted {
		t.Fatalf("transcript has %d file reads and %d checkpoints, want %d and %d", reads, marks, steps, compacted)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// compact-ratio prints the effective value and writes a valid one to the
// user config, keeping what the file already said.
func TestConfigCompactRatio(t *testing.T) {
	e := newE2E(t)
	out, stderr, code := e.run("config", "check")
	if code != exitOK || !strings.Contains(out, "model fake/fake-model (context window 128000 tokens, compacted at 115200; ") {
		t.Fatalf("config check: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = e.run("config", "compact-ratio")
	if code != exitOK || !strings.Contains(out, "compact_ratio = 0.9 (default)") {
		t.Fatalf("show: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = e.run("config", "compact-ratio", "0.75")
	if code != exitOK || !strings.Contains(out, "compact_ratio = 0.75 ("+filepath.Join(e.home, "config.toml")+")") {
		t.Fatalf("set: exit %d\n%s%s", code, out, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(e.home, "config.toml"))
	if !strings.Contains(string(data), "[[providers]]") || !strings.Contains(string(data), "[agent]\ncompact_ratio = 0.75\n") {
		t.Fatalf("user config:\n%s", data)
	}
	for _, bad := range []string{"1", "0", "-0.2", "x"} {
		_, stderr, code = e.run("config", "compact-ratio", bad)
		if code != exitUsage || !strings.Contains(stderr, "compact-ratio") {
			t.Errorf("%s: exit %d\n%s", bad, code, stderr)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(e.home, "config.toml")); string(after) != string(data) {
		t.Fatal("a refused value changed the file")
	}
}

// A 5 MB tool result (an MCP tool echoing what it was given) reaches the
// model bounded, and the run's transcript stores it whole.
func TestRunBoundsAGiantToolResult(t *testing.T) {
	big := "HEAD-" + strings.Repeat("abcdefgh", 5<<20/8) + "-TAIL"
	args, _ := json.Marshal(map[string]string{"text": big})
	e := newE2E(t,
		toolTurn(call("c1", "mcp__example__echo", string(args))),
		answer("echoed"),
	)
	e.configure(fmt.Sprintf(`max_output_bytes = %d
max_stream_bytes = %d

[[plugins]]
name = "example"
command = %q
`, 16<<20, 64<<20, plugin))
	stdout, stderr, code := e.run("run", "--json", "echo a lot")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, tail(stderr, 2000))
	}
	reqs := e.srv.Requests()
	seen := reqs[1].Messages[len(reqs[1].Messages)-1]
	// Head and tail kept, and a last line saying how to page through the
	// whole (the tool_result built-in).
	body, note, _ := strings.Cut(seen.Content, "\n[the full result is ")
	if seen.ToolCallID != "c1" || len(seen.Content) > agent.MaxToolResult || !strings.HasPrefix(body, "HEAD-") || !strings.HasSuffix(body, "-TAIL") ||
		!strings.Contains(note, `tool_result {"tool_call_id": "c1"}`) {
		t.Fatalf("the model saw %d bytes: %.100q … %q", len(seen.Content), seen.Content, seen.Content[max(0, len(seen.Content)-200):])
	}
	if len(reqs[1].Body) > len(args)+64<<10 {
		t.Fatalf("the second request is %d bytes: the full result was sent", len(reqs[1].Body))
	}
	var res struct{ Transcript string }
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(res.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msgs, err := agent.ReadTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == agent.RoleTool {
			if m.RawContent != big || m.Content != seen.Content {
				t.Fatalf("transcript keeps %d raw bytes (want %d) and %d visible", len(m.RawContent), len(big), len(m.Content))
			}
			return
		}
	}
	t.Fatal("no tool result in the transcript")
}
