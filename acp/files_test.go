package acp

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/policy"
	"reasonix/runner/session"
)

// toolResults are the tool messages of the last model request.
func toolResults(reqs []agenttest.Request) []string {
	var out []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == agent.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

func TestFileToolsUseTheEditorsBuffers(t *testing.T) {
	work := t.TempDir()
	real, _ := filepath.EvalSymlinks(work)
	file := filepath.Join(real, "a.txt")
	if err := os.WriteFile(file, []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "out.txt")
	step := func(calls ...agent.ToolCall) agenttest.Turn { return agenttest.Turn{ToolCalls: calls} }
	prov := agenttest.NewScriptedProvider(
		step(agent.ToolCall{ID: "r1", Name: "read_file", Arguments: `{"path":"a.txt"}`}),
		step(agent.ToolCall{ID: "e1", Name: "edit_file", Arguments: `{"path":"a.txt","old_string":"unsaved","new_string":"edited"}`}),
		step(agent.ToolCall{ID: "w1", Name: "write_file", Arguments: `{"path":` + strconv.Quote(outside) + `,"content":"x"}`}),
		agenttest.Turn{Text: "done"},
	)
	dir := t.TempDir()
	c := newClientWith(t, Config{
		Settings: config.Default(),
		Posture:  policy.PostureAuto,
		Models:   func(string) (session.Model, error) { return session.Model{Provider: prov, Name: "m"}, nil },
		Dir:      filepath.Join(dir, "sessions"),
	})
	c.prov, c.dir = prov, dir
	c.buffers = map[string]string{file: "unsaved buffer\n"}
	c.initializeWith(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}})
	id := c.newSession(work)
	if got := c.prompt(id, "edit a.txt"); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	reqs := prov.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if r := toolResults(reqs[:2]); len(r) != 1 || !strings.Contains(r[0], "unsaved buffer") {
		t.Errorf("read_file did not read the buffer: %q", r)
	}
	if r := toolResults(reqs[:3]); len(r) != 2 || !strings.Contains(r[1], "edited a.txt") {
		t.Errorf("edit_file: %q", r)
	}
	c.mu.Lock()
	buf, calls := c.buffers[file], slices.Clone(c.fsCalls)
	c.mu.Unlock()
	if buf != "edited buffer\n" {
		t.Errorf("the editor's buffer is %q", buf)
	}
	if b, _ := os.ReadFile(file); string(b) != "on disk\n" {
		t.Errorf("the edit went to the disk too: %q", b)
	}
	// The write outside the workspace was refused before the editor heard
	// of it: the confinement is the tools' own.
	if r := toolResults(reqs); len(r) != 3 || strings.Contains(r[2], "created") {
		t.Errorf("the write outside the workspace: %q", r)
	}
	want := []string{"read " + file, "read " + file, "write " + file}
	if !slices.Equal(calls, want) {
		t.Errorf("fs calls %q, want %q", calls, want)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the write outside the workspace happened")
	}
}

func TestFileToolsUseTheDiskWithoutBothCapabilities(t *testing.T) {
	work := t.TempDir()
	prov := agenttest.NewScriptedProvider(
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "w1", Name: "write_file", Arguments: `{"path":"b.txt","content":"disk"}`}}},
		agenttest.Turn{Text: "done"},
	)
	dir := t.TempDir()
	c := newClientWith(t, Config{
		Settings: config.Default(),
		Posture:  policy.PostureAuto,
		Models:   func(string) (session.Model, error) { return session.Model{Provider: prov, Name: "m"}, nil },
		Dir:      filepath.Join(dir, "sessions"),
	})
	c.prov, c.dir = prov, dir
	c.initializeWith(map[string]any{"fs": map[string]any{"readTextFile": true}})
	id := c.newSession(work)
	c.prompt(id, "write b")
	if b, err := os.ReadFile(filepath.Join(work, "b.txt")); err != nil || string(b) != "disk" {
		t.Errorf("b.txt = %q, %v", b, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.fsCalls) != 0 {
		t.Errorf("fs calls %q to a client that cannot write", c.fsCalls)
	}
}
