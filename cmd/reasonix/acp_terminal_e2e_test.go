//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/internal/eventually"
	"reasonix/internal/testenv"
)

// editorTerminal is a terminal an editor made for terminal/create: it
// really runs the command it was given.
type editorTerminal struct {
	req    sdk.CreateTerminalRequest
	cmd    *exec.Cmd
	out    syncBuffer
	exited chan struct{}
	code   int
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// terminalEditor answers terminal/create by running the command,
// terminal/wait_for_exit when it exited, and terminal/release by noting it.
type terminalEditor struct {
	mu       sync.Mutex
	terms    []*editorTerminal
	released []string
}

func (e *terminalEditor) handle(_ context.Context, method string, params json.RawMessage) (any, *sdk.RequestError, bool) {
	switch method {
	case "terminal/create":
		var req sdk.CreateTerminalRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, sdk.NewInvalidParams(err.Error()), true
		}
		cmd := exec.Command(req.Command, req.Args...)
		term := &editorTerminal{req: req, cmd: cmd, exited: make(chan struct{})}
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		for _, v := range req.Env {
			cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
		}
		if req.Cwd != nil {
			cmd.Dir = *req.Cwd
		}
		cmd.Stdout, cmd.Stderr = &term.out, &term.out
		if err := cmd.Start(); err != nil {
			return nil, sdk.NewInternalError(map[string]any{"error": err.Error()}), true
		}
		go func() {
			err := cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				term.code = ee.ExitCode()
			}
			close(term.exited)
		}()
		e.mu.Lock()
		defer e.mu.Unlock()
		e.terms = append(e.terms, term)
		return sdk.CreateTerminalResponse{TerminalId: fmt.Sprintf("term-%d", len(e.terms))}, nil, true
	case "terminal/wait_for_exit":
		var p struct {
			TerminalID string `json:"terminalId"`
		}
		json.Unmarshal(params, &p)
		e.mu.Lock()
		var term *editorTerminal
		var i int
		if _, err := fmt.Sscanf(p.TerminalID, "term-%d", &i); err == nil && i >= 1 && i <= len(e.terms) {
			term = e.terms[i-1]
		}
		e.mu.Unlock()
		if term == nil {
			return nil, sdk.NewInvalidParams("unknown terminal"), true
		}
		<-term.exited
		return map[string]any{"exitCode": term.code}, nil, true
	case "terminal/release":
		var p struct {
			TerminalID string `json:"terminalId"`
		}
		json.Unmarshal(params, &p)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.released = append(e.released, p.TerminalID)
		return map[string]any{}, nil, true
	}
	return nil, nil, false
}

// TestACPTerminalShowsTheSandboxedCommand: `reasonix acp` with an editor
// that has terminals runs a bash call in its own sandbox (bubblewrap,
// enforced) and the editor's terminal, which runs the `reasonix acp
// attach` it was given, shows exactly the command's output, the sandbox's
// refusal of a write outside the workspace included, and exits with its
// status; the write outside did not happen. The attach token is good
// once: attaching again with it, or with a wrong one, is refused.
func TestACPTerminalShowsTheSandboxedCommand(t *testing.T) {
	testenv.LookPath(t, testenv.Bwrap)
	outside, err := os.MkdirTemp("/var/tmp", "reasonix-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	command := fmt.Sprintf("echo in > inside.txt && cat inside.txt; echo out > %s/outside.txt; exit 4", outside)
	args, _ := json.Marshal(map[string]string{"command": command})
	e := newE2E(t, toolTurn(call("c1", "bash", string(args))), answer("ran it"))
	e.configure("\n[sandbox]\nbash = \"enforce\"\n")
	editor := &terminalEditor{}
	p := startACPWith(t, e, editor.handle)
	if _, err := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"terminal": true}}); err != nil {
		t.Fatal(err)
	}
	raw, err := p.call("session/new", map[string]any{"cwd": e.work, "mcpServers": []any{}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, p.stderr)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(raw, &s)
	raw, err = p.call("session/prompt", map[string]any{"sessionId": s.SessionID,
		"prompt": []any{map[string]string{"type": "text", "text": "run it"}}})
	if err != nil || !strings.Contains(string(raw), `"end_turn"`) {
		t.Fatalf("session/prompt: %s, %v\n%s", raw, err, p.stderr)
	}

	editor.mu.Lock()
	terms, released := editor.terms, editor.released
	editor.mu.Unlock()
	if len(terms) != 1 {
		t.Fatalf("%d terminals, want 1\n%s", len(terms), p.stderr)
	}
	term := terms[0]
	<-term.exited
	shown := term.out.String()
	if !strings.HasPrefix(shown, "in\n") || !strings.Contains(shown, "outside.txt") || term.code != 4 {
		t.Errorf("the terminal showed %q and exited %d; want the command's output and 4", shown, term.code)
	}
	if _, err := os.Stat(filepath.Join(outside, "outside.txt")); err == nil {
		t.Error("the command shown in the editor's terminal wrote outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(e.work, "inside.txt")); string(b) != "in\n" {
		t.Errorf("inside.txt = %q", b)
	}
	if len(released) != 1 || released[0] != "term-1" {
		t.Errorf("released %v, want term-1", released)
	}
	// The model's result is the command's output as the terminal showed
	// it, and its exit code.
	var result string
	for _, r := range e.srv.Requests() {
		for _, m := range r.Messages {
			if m.ToolCallID == "c1" {
				result = m.Content
			}
		}
	}
	if !strings.HasPrefix(result, shown) || !strings.Contains(result, "exit code: 4") {
		t.Errorf("the model got %q; the terminal showed %q", result, shown)
	}
	p.mu.Lock()
	updates := strings.Join(p.updates, "\n")
	p.mu.Unlock()
	if !strings.Contains(updates, `{"terminalId":"term-1","type":"terminal"}`) && !strings.Contains(updates, `{"type":"terminal","terminalId":"term-1"}`) {
		t.Errorf("no tool call shows the terminal:\n%s", updates)
	}

	var token string
	for _, v := range term.req.Env {
		if v.Name == "REASONIX_ATTACH_TOKEN" {
			token = v.Value
		}
	}
	for name, tok := range map[string]string{"the used token": token, "a wrong token": strings.Repeat("0", 64)} {
		again := exec.Command(term.req.Command, term.req.Args...)
		again.Env = []string{"REASONIX_ATTACH_TOKEN=" + tok}
		out, err := again.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "refused") {
			t.Errorf("attaching with %s: %v, %q", name, err, out)
		}
	}
	p.stop()
}

// TestACPTerminalKillStopsTheCommand: the editor killing its terminal
// (SIGTERM to `reasonix acp attach`, as terminal/kill does) stops the
// sandboxed command; the turn goes on and the model is told.
func TestACPTerminalKillStopsTheCommand(t *testing.T) {
	e := newE2E(t, toolTurn(call("c1", "bash", `{"command":"echo ready; sleep 300"}`)), answer("stopped"))
	editor := &terminalEditor{}
	p := startACPWith(t, e, editor.handle)
	if _, err := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"terminal": true}}); err != nil {
		t.Fatal(err)
	}
	raw, err := p.call("session/new", map[string]any{"cwd": e.work, "mcpServers": []any{}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, p.stderr)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(raw, &s)
	done := make(chan string, 1)
	go func() {
		raw, err := p.call("session/prompt", map[string]any{"sessionId": s.SessionID,
			"prompt": []any{map[string]string{"type": "text", "text": "run it"}}})
		done <- fmt.Sprint(string(raw), err)
	}()
	var term *editorTerminal
	eventually.True(t, 60*time.Second, func() bool {
		editor.mu.Lock()
		defer editor.mu.Unlock()
		if len(editor.terms) == 1 {
			term = editor.terms[0]
			return strings.Contains(term.out.String(), "ready")
		}
		return false
	}, "the terminal did not show the command's first line")
	term.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case got := <-done:
		if !strings.Contains(got, "end_turn") {
			t.Fatalf("session/prompt: %s\n%s", got, p.stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("killing the terminal did not stop the command")
	}
	var result string
	for _, r := range e.srv.Requests() {
		for _, m := range r.Messages {
			if m.ToolCallID == "c1" {
				result = m.Content
			}
		}
	}
	if !strings.Contains(result, "stopped by the user") {
		t.Errorf("the model got %q", result)
	}
	p.stop()
}
