package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner/session"
)

// TestFileEditsCarryTheirDiff: write_file's and edit_file's tool_call
// shows the change as ACP diff content (absolute path, oldText for an
// edit, newText) before it is asked or run.
func TestFileEditsCarryTheirDiff(t *testing.T) {
	c := newClient(t,
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "w1", Name: "write_file", Arguments: `{"path":"new.txt","content":"fresh\n"}`}}},
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "r1", Name: "read_file", Arguments: `{"path":"old.txt"}`}}},
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "e1", Name: "edit_file", Arguments: `{"path":"old.txt","old_string":"before","new_string":"after"}`}}},
		agenttest.Turn{Text: "done"},
	)
	c.initialize()
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "old.txt"), []byte("before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := c.newSession(cwd)
	stop := c.promptAsync(id, "change the files")
	for range 2 {
		awaitPerm(t, c, stop).Reply <- optAllowOnce
	}
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	diff := func(call string) map[string]any {
		for _, u := range c.seen(id) {
			var m struct {
				ID      string           `json:"toolCallId"`
				Content []map[string]any `json:"content"`
			}
			json.Unmarshal(u.Raw, &m)
			if u.Kind == "tool_call" && m.ID == call {
				for _, ct := range m.Content {
					if ct["type"] == "diff" {
						return ct
					}
				}
			}
		}
		return nil
	}
	if d := diff("w1"); d == nil || d["path"] != filepath.Join(cwd, "new.txt") || d["newText"] != "fresh\n" || d["oldText"] != nil {
		t.Errorf("write_file's diff %v", d)
	}
	if d := diff("e1"); d == nil || d["path"] != filepath.Join(cwd, "old.txt") || d["oldText"] != "before" || d["newText"] != "after" {
		t.Errorf("edit_file's diff %v", d)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "old.txt")); string(b) != "after\n" {
		t.Errorf("old.txt is %q", b)
	}
}

// TestStepLimitIsMaxTurnRequests: a turn stopped by the step limit
// ([agent] max_steps) answers max_turn_requests.
func TestStepLimitIsMaxTurnRequests(t *testing.T) {
	loop := agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "r", Name: "read_file", Arguments: `{"path":"x.txt"}`}}}
	prov := agenttest.NewScriptedProvider(loop, loop, loop, loop)
	set := config.Default()
	set.Agent.MaxSteps = 2
	c := newClientWith(t, Config{Settings: set, Dir: filepath.Join(t.TempDir(), "sessions"),
		Models: func(string) (session.Model, error) { return session.Model{Provider: prov, Name: "m"}, nil }})
	c.initialize()
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "x.txt"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := c.newSession(cwd)
	if got := c.prompt(id, "read forever"); got != "max_turn_requests" {
		t.Errorf("stop reason %q, want max_turn_requests", got)
	}
}

// TestMCPServerShapes: session/new's mcpServers in the stdio, Streamable
// HTTP and SSE shapes, env and headers as ACP's [{name, value}] lists or
// the older object maps, become plugins; bad entries are refused naming
// the entry.
func TestMCPServerShapes(t *testing.T) {
	got, err := pluginsFrom(json.RawMessage(`[
		{"name":"files","command":"mcp-files","args":["--root","."],"env":[{"name":"TOKEN","value":"t1"}]},
		{"type":"stdio","name":"old","command":"mcp-old","env":{"TOKEN":"t2"}},
		{"type":"http","name":"web","url":"https://mcp.example.com/mcp","headers":[{"name":"Authorization","value":"Bearer h1"}]},
		{"type":"sse","name":"legacy","url":"http://127.0.0.1:9/sse","headers":{"X-Key":"h2"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []config.Plugin{
		{Name: "files", Source: "ACP session/new", Type: "stdio", Command: "mcp-files", Args: []string{"--root", "."}, Env: map[string]string{"TOKEN": "t1"}},
		{Name: "old", Source: "ACP session/new", Type: "stdio", Command: "mcp-old", Env: map[string]string{"TOKEN": "t2"}},
		{Name: "web", Source: "ACP session/new", Type: "http", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer h1"}},
		{Name: "legacy", Source: "ACP session/new", Type: "sse", URL: "http://127.0.0.1:9/sse", Headers: map[string]string{"X-Key": "h2"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plugins\n%+v\nwant\n%+v", got, want)
	}
	for raw, why := range map[string]string{
		`[{"name":"x"}]`: "needs a command",
		`[{"type":"http","name":"x","url":"file:///etc/passwd"}]`: "http(s) URL",
		`[{"type":"ws","name":"x","url":"https://h"}]`:            "unknown type",
		`[{"name":"a b","command":"c"}]`:                          "without spaces",
		`[{"name":"x","command":"c"},{"name":"x","command":"d"}]`: "used twice",
		`[{"name":"x","command":"c","env":[{"value":"v"}]}]`:      "no name",
		`[{"name":"x","command":"c","env":"TOKEN=v"}]`:            "a [{name, value}] list",
		`{"name":"x"}`: "mcpServers",
	} {
		if _, err := pluginsFrom(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an error saying %q", raw, err, why)
		}
	}
}

// FuzzMCPServers: whatever an editor sends as mcpServers, the result is an
// error or plugins each with a usable name, a known type, the fields its
// type needs, and no name twice.
func FuzzMCPServers(f *testing.F) {
	for _, s := range []string{
		`[{"name":"files","command":"mcp-files","env":[{"name":"A","value":"b"}]}]`,
		`[{"type":"HTTP","name":"w","url":"https://h/mcp","headers":{"A":"b"}}]`,
		`[{"type":"sse","name":"w","url":"http://[::1]:0/sse"}]`,
		`[{"name":"a__b","command":"c"}]`, `null`, `[]`, `[null]`, `[{"name":"\u0000","command":"\ud800"}]`,
		`[{"name":"x","command":"c","env":[{"name":"","value":""}]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := pluginsFrom(raw)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range got {
			if p.Name == "" || strings.ContainsAny(p.Name, "/ \t\n") || strings.Contains(p.Name, "__") || seen[p.Name] {
				t.Fatalf("plugin name %q (of %v)", p.Name, got)
			}
			seen[p.Name] = true
			switch p.Type {
			case "stdio":
				if strings.TrimSpace(p.Command) == "" {
					t.Fatalf("stdio plugin without a command: %+v", p)
				}
			case "http", "sse":
				if u := strings.ToLower(p.URL); !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
					t.Fatalf("%s plugin with URL %q", p.Type, p.URL)
				}
			default:
				t.Fatalf("plugin type %q", p.Type)
			}
		}
	})
}
