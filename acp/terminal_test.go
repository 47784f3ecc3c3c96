//go:build !windows

package acp

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
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/internal/eventually"
	"reasonix/policy"
	"reasonix/runner/session"
)

// editorTerminals is an editor's terminals as ACP has them: terminal/create
// really runs the command it is given (here `reasonix acp attach`, this
// test binary), and output, wait_for_exit, kill and release act on it.
// With run false the editor answers terminal/create but runs nothing, as
// an editor whose terminals are on another host.
type editorTerminals struct {
	t   testing.TB
	run bool

	mu      sync.Mutex
	terms   map[string]*editorTerm
	order   []string
	methods []string
}

type editorTerm struct {
	req      sdk.CreateTerminalRequest
	cmd      *exec.Cmd
	out      lockedBuffer
	exited   chan struct{}
	code     int
	released bool
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (e *editorTerminals) handle(ctx context.Context, method string, params json.RawMessage) (any, *sdk.RequestError, bool) {
	if !strings.HasPrefix(method, "terminal/") {
		return nil, nil, false
	}
	e.mu.Lock()
	e.methods = append(e.methods, method)
	e.mu.Unlock()
	if method == "terminal/create" {
		var req sdk.CreateTerminalRequest
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, sdk.NewInvalidParams(err.Error()), true
		}
		term := &editorTerm{req: req, exited: make(chan struct{})}
		if e.run {
			cmd := exec.Command(req.Command, req.Args...)
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
			term.cmd = cmd
			go func() {
				err := cmd.Wait()
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					term.code = ee.ExitCode()
				case err != nil:
					term.code = -1
				}
				close(term.exited)
			}()
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		id := "term-" + string(rune('1'+len(e.order)))
		if e.terms == nil {
			e.terms = map[string]*editorTerm{}
		}
		e.terms[id] = term
		e.order = append(e.order, id)
		return sdk.CreateTerminalResponse{TerminalId: id}, nil, true
	}
	var p struct {
		TerminalID string `json:"terminalId"`
	}
	json.Unmarshal(params, &p)
	e.mu.Lock()
	term := e.terms[p.TerminalID]
	e.mu.Unlock()
	if term == nil {
		return nil, sdk.NewInvalidParams("unknown terminal"), true
	}
	switch method {
	case "terminal/output":
		return map[string]any{"output": term.out.String(), "truncated": false}, nil, true
	case "terminal/wait_for_exit":
		select {
		case <-term.exited:
		case <-ctx.Done():
		}
		return map[string]any{"exitCode": term.code}, nil, true
	case "terminal/kill":
		term.kill()
		return map[string]any{}, nil, true
	case "terminal/release":
		term.kill()
		e.mu.Lock()
		term.released = true
		e.mu.Unlock()
		return map[string]any{}, nil, true
	}
	return nil, sdk.NewMethodNotFound(method), true
}

func (t *editorTerm) kill() {
	if t.cmd != nil {
		select {
		case <-t.exited:
		default:
			t.cmd.Process.Kill()
		}
	}
}

// created returns the terminals created so far.
func (e *editorTerminals) created() []*editorTerm {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*editorTerm
	for _, id := range e.order {
		out = append(out, e.terms[id])
	}
	return out
}

// newTerminalClient is a client with terminals (running them when run),
// whose sessions run under yolo so no call is asked.
func newTerminalClient(t testing.TB, run bool, turns ...agenttest.Turn) (*client, *editorTerminals) {
	t.Helper()
	return newYoloClient(t, true, run, turns...)
}

// newYoloClient is newTerminalClient with the terminal capability or not.
func newYoloClient(t testing.TB, capable, run bool, turns ...agenttest.Turn) (*client, *editorTerminals) {
	t.Helper()
	prov := agenttest.NewScriptedProvider(turns...)
	dir := t.TempDir()
	c := newClientWith(t, Config{
		Settings: config.Default(),
		Models:   func(string) (session.Model, error) { return session.Model{Provider: prov, Name: "m"}, nil },
		Dir:      filepath.Join(dir, "sessions"),
		Posture:  policy.PostureYolo,
	})
	c.prov, c.dir = prov, dir
	terms := &editorTerminals{t: t, run: run}
	c.extra = terms.handle
	c.initializeWith(map[string]any{"terminal": capable})
	return c, terms
}

func bashTurn(id, command string) agenttest.Turn {
	args, _ := json.Marshal(map[string]string{"command": command})
	return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: id, Name: "bash", Arguments: string(args)}}}
}

// toolResult is what the model was told a call returned.
func toolResult(prov *agenttest.ScriptedProvider, id string) string {
	for _, r := range prov.Requests() {
		for _, m := range r.Messages {
			if m.ToolCallID == id {
				return m.Content
			}
		}
	}
	return ""
}

// callContents are the content lists of a call's updates, in order.
func callContents(c *client, session, id string) []string {
	var out []string
	for _, u := range c.seen(session) {
		var m struct {
			ID      string          `json:"toolCallId"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(u.Raw, &m)
		if m.ID == id && len(m.Content) > 0 {
			out = append(out, string(m.Content))
		}
	}
	return out
}

// TestTerminalShowsTheCommandsOutput: with the terminal capability a bash
// call runs here and the editor's terminal (`reasonix acp attach`, really
// run) prints exactly its output and exits with its status; the call's
// card shows the terminal; the model's result is the one it gets without
// a terminal; the terminal is released. Its token is then refused, as is
// a wrong one.
func TestTerminalShowsTheCommandsOutput(t *testing.T) {
	const command = "echo out; echo err >&2; printf 'no newline'; exit 3"
	c, terms := newTerminalClient(t, true, bashTurn("b1", command), agenttest.Turn{Text: "ran"})
	cwd := t.TempDir()
	id := c.newSession(cwd)
	if got := c.prompt(id, "run it"); got != "end_turn" {
		t.Fatal(got)
	}
	created := terms.created()
	if len(created) != 1 {
		t.Fatalf("%d terminals created, want 1", len(created))
	}
	term := created[0]
	<-term.exited
	if got := term.out.String(); got != "out\nerr\nno newline" {
		t.Errorf("the terminal showed %q", got)
	}
	if term.code != 3 {
		t.Errorf("the terminal exited %d, want the command's 3", term.code)
	}
	if !term.released {
		t.Error("the terminal was not released")
	}
	if got := toolResult(c.prov, "b1"); got != "out\nerr\nno newline\nexit code: 3" {
		t.Errorf("the model got %q", got)
	}
	// The token is in the environment, never the arguments.
	var token string
	for _, v := range term.req.Env {
		if v.Name == AttachTokenEnv {
			token = v.Value
		}
	}
	if token == "" || strings.Contains(strings.Join(term.req.Args, " "), token) {
		t.Errorf("the token: env %v, args %v", term.req.Env, term.req.Args)
	}
	contents := callContents(c, id, "b1")
	var withTerminal int
	for _, s := range contents {
		if strings.Contains(s, `"type":"terminal"`) && strings.Contains(s, `"terminalId":"term-1"`) {
			withTerminal++
		}
	}
	if withTerminal != 2 || !strings.Contains(contents[len(contents)-1], "term-1") {
		t.Errorf("the call's contents %v, want the terminal while it runs and when it completed", contents)
	}

	socket := term.req.Args[len(term.req.Args)-1]
	if st, err := os.Stat(filepath.Dir(socket)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the socket's directory: %v, %v", st, err)
	}
	for name, tok := range map[string]string{"the used token": token, "a wrong token": strings.Repeat("ab", 32)} {
		var out bytes.Buffer
		if _, err := Attach(t.Context(), socket, tok, &out); err == nil || !strings.Contains(err.Error(), "refused") || out.Len() != 0 {
			t.Errorf("%s: %v, showed %q", name, err, out.String())
		}
	}
}

// TestTerminalKillStopsTheCommand: the editor killing the terminal stops
// the command (and its children) here; the turn goes on and the model is
// told the command was stopped.
func TestTerminalKillStopsTheCommand(t *testing.T) {
	c, terms := newTerminalClient(t, true, bashTurn("b1", "echo ready; sleep 300"), agenttest.Turn{Text: "stopped"})
	id := c.newSession(t.TempDir())
	stop := c.promptAsync(id, "run it")
	var term *editorTerm
	eventually.True(t, 30*time.Second, func() bool {
		if ts := terms.created(); len(ts) == 1 {
			term = ts[0]
			return strings.Contains(term.out.String(), "ready")
		}
		return false
	}, "the terminal did not show the command's first line")
	if _, _, ok := terms.handle(t.Context(), "terminal/kill", json.RawMessage(`{"terminalId":"term-1"}`)); !ok {
		t.Fatal("terminal/kill not handled")
	}
	select {
	case got := <-stop:
		if got != "end_turn" {
			t.Fatal(got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the command was not stopped by the terminal's kill")
	}
	if got := toolResult(c.prov, "b1"); !strings.Contains(got, "ready\n") || !strings.Contains(got, "stopped by the user") {
		t.Errorf("the model got %q", got)
	}
}

// TestTerminalThatDoesNotAttachFallsBack: an editor that creates the
// terminal but never runs it (its terminals are elsewhere) gets the call's
// text result, and the session asks for no more terminals.
func TestTerminalThatDoesNotAttachFallsBack(t *testing.T) {
	c, terms := newTerminalClient(t, false, bashTurn("b1", "echo one"), bashTurn("b2", "echo two"), agenttest.Turn{Text: "ran"})
	id := c.newSession(t.TempDir())
	if got := c.prompt(id, "run them"); got != "end_turn" {
		t.Fatal(got)
	}
	if n := len(terms.created()); n != 1 {
		t.Errorf("%d terminals created, want 1 (none after one did not attach)", n)
	}
	for call, want := range map[string]string{"b1": "one", "b2": "two"} {
		contents := callContents(c, id, call)
		if len(contents) == 0 || !strings.Contains(contents[len(contents)-1], want+`\nexit code: 0`) {
			t.Errorf("%s's contents %v, want its text result last", call, contents)
		}
		if got := toolResult(c.prov, call); got != want+"\nexit code: 0" {
			t.Errorf("the model got %q", got)
		}
	}
	if !terms.created()[0].released {
		t.Error("the terminal that did not attach was not released")
	}
}

// TestNoTerminalWithoutTheCapability: a client without terminals never
// gets terminal/create.
func TestNoTerminalWithoutTheCapability(t *testing.T) {
	c := newClient(t, bashTurn("b1", "echo one"), agenttest.Turn{Text: "ran"})
	terms := &editorTerminals{t: t, run: true}
	c.extra = terms.handle
	c.initialize()
	id := c.newSession(t.TempDir())
	stop := c.promptAsync(id, "run it")
	var got string
	select {
	case p := <-c.perms: // if the policy asks about it
		p.Reply <- optAllowOnce
		got = <-stop
	case got = <-stop:
	}
	if got != "end_turn" {
		t.Fatal(got)
	}
	if len(terms.methods) != 0 {
		t.Errorf("terminal methods called: %v", terms.methods)
	}
	if got := toolResult(c.prov, "b1"); got != "one\nexit code: 0" {
		t.Errorf("the model got %q", got)
	}
}

// BenchmarkTerminalBashCall is one prompt with one bash call and an
// answer, with the editor's terminal (create, attach, show, wait for exit,
// release) and without: the terminal's cost per call.
func BenchmarkTerminalBashCall(b *testing.B) {
	for _, withTerminal := range []bool{false, true} {
		name := "text"
		if withTerminal {
			name = "terminal"
		}
		b.Run(name, func(b *testing.B) {
			turns := make([]agenttest.Turn, 0, 2*b.N)
			for i := 0; i < b.N; i++ {
				turns = append(turns, bashTurn(fmt.Sprintf("b%d", i), "echo hi"), agenttest.Turn{Text: "ran"})
			}
			c, terms := newYoloClient(b, withTerminal, true, turns...)
			id := c.newSession(b.TempDir())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if got := c.prompt(id, "run it"); got != "end_turn" {
					b.Fatal(got)
				}
			}
			b.StopTimer()
			if n := len(terms.created()); withTerminal != (n == b.N) {
				b.Fatalf("%d terminals for %d calls", n, b.N)
			}
		})
	}
}
