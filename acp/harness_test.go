package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner/session"
)

// client is a minimal ACP client over pipes: it records every
// session/update, hands permission requests to the test, and checks that
// every line the agent wrote is a JSON-RPC message.
type client struct {
	t    testing.TB
	conn *sdk.Connection
	prov *agenttest.ScriptedProvider
	dir  string

	mu      sync.Mutex
	updates []update
	// buffers are the editor's open files, by absolute path, for
	// fs/read_text_file and fs/write_text_file; fsCalls records each as
	// "read PATH" or "write PATH".
	buffers map[string]string
	fsCalls []string
	perms   chan permission
	elicits chan elicitation
	// extra, when set before initialize, answers the methods it knows
	// (ok) before the ones above: the editor's terminals.
	extra func(ctx context.Context, method string, params json.RawMessage) (res any, rerr *sdk.RequestError, ok bool)

	in        *io.PipeWriter
	served    chan error
	wireLines chan []string
}

type update struct {
	Session string
	Kind    string
	Raw     json.RawMessage
}

// elicitation is an elicitation/create the test answers with a response
// object.
type elicitation struct {
	Params map[string]any
	Reply  chan map[string]any
}

type permission struct {
	Params sdk.RequestPermissionRequest
	Reply  chan string // an option id, or "" for cancelled
}

func newClient(t *testing.T, turns ...agenttest.Turn) *client {
	t.Helper()
	prov := agenttest.NewScriptedProvider(turns...)
	dir := t.TempDir()
	c := newClientWith(t, Config{
		Settings: config.Default(),
		Models:   func(string) (session.Model, error) { return session.Model{Provider: prov, Name: "m"}, nil },
		Dir:      filepath.Join(dir, "sessions"),
	})
	c.prov, c.dir = prov, dir
	return c
}

// newClientWith serves an Agent built from cfg to a new client.
func newClientWith(t testing.TB, cfg Config) *client {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	c := &client{t: t, perms: make(chan permission, 4), elicits: make(chan elicitation, 4), in: c2aW,
		served: make(chan error, 1), wireLines: make(chan []string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c.served <- a.Serve(ctx, c2aR, a2cW)
		a2cW.Close()
	}()
	// Everything the agent writes is recorded, so the test can check no
	// byte on "stdout" is anything but a protocol message.
	wireR, wireW := io.Pipe()
	go func() {
		var lines []string
		sc := bufio.NewScanner(io.TeeReader(a2cR, wireW))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		wireW.Close()
		c.wireLines <- lines
	}()
	c.conn = sdk.NewConnection(c.handle, c2aW, wireR)
	t.Cleanup(func() {
		c2aW.Close()
		if err := <-c.served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		cancel()
		<-c.conn.Done()
		for i, l := range <-c.wireLines {
			var m struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil || m.JSONRPC != "2.0" {
				t.Errorf("stdout line %d is not a JSON-RPC message: %q", i, l)
			}
		}
	})
	return c
}

func (c *client) handle(ctx context.Context, method string, params json.RawMessage) (any, *sdk.RequestError) {
	if c.extra != nil {
		if res, rerr, ok := c.extra(ctx, method, params); ok {
			return res, rerr
		}
	}
	switch method {
	case "session/update":
		var n struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		}
		if err := json.Unmarshal(params, &n); err != nil {
			c.t.Errorf("session/update: %v", err)
			return nil, nil
		}
		var kind struct {
			SessionUpdate string `json:"sessionUpdate"`
		}
		json.Unmarshal(n.Update, &kind)
		c.mu.Lock()
		c.updates = append(c.updates, update{n.SessionID, kind.SessionUpdate, n.Update})
		c.mu.Unlock()
		return nil, nil
	case "session/request_permission":
		var p sdk.RequestPermissionRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, sdk.NewInvalidParams(err.Error())
		}
		reply := make(chan string, 1)
		c.perms <- permission{p, reply}
		var id string
		select {
		case id = <-reply:
		case <-ctx.Done():
		}
		if id == "" {
			return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
		}
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(id))}, nil
	case "fs/read_text_file", "fs/write_text_file":
		var p struct {
			SessionID string  `json:"sessionId"`
			Path      string  `json:"path"`
			Content   *string `json:"content"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, sdk.NewInvalidParams(err.Error())
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if method == "fs/write_text_file" {
			c.fsCalls = append(c.fsCalls, "write "+p.Path)
			if c.buffers == nil {
				c.buffers = map[string]string{}
			}
			c.buffers[p.Path] = *p.Content
			return map[string]any{}, nil
		}
		c.fsCalls = append(c.fsCalls, "read "+p.Path)
		text, ok := c.buffers[p.Path]
		if !ok {
			return nil, &sdk.RequestError{Code: -32002, Message: "not open"}
		}
		return map[string]any{"content": text}, nil
	case "elicitation/create":
		var p map[string]any
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, sdk.NewInvalidParams(err.Error())
		}
		reply := make(chan map[string]any, 1)
		c.elicits <- elicitation{p, reply}
		select {
		case r := <-reply:
			return r, nil
		case <-ctx.Done():
			return map[string]any{"action": "cancel"}, nil
		}
	}
	return nil, sdk.NewMethodNotFound(method)
}

// call sends a request and decodes its result; a JSON-RPC error fails the
// test.
func (c *client) call(method string, params, out any) {
	c.t.Helper()
	if err := c.try(method, params, out); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) try(method string, params, out any) *sdk.RequestError {
	res, err := sdk.SendRequest[json.RawMessage](c.conn, c.t.Context(), method, params)
	if err != nil {
		if re, ok := err.(*sdk.RequestError); ok {
			return re
		}
		c.t.Fatalf("%s: %v", method, err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			c.t.Fatalf("%s result %s: %v", method, res, err)
		}
	}
	return nil
}

// errCode is the JSON-RPC error code of a call that must fail.
func (c *client) errCode(method string, params any) int {
	c.t.Helper()
	err := c.try(method, params, nil)
	if err == nil {
		c.t.Fatalf("%s succeeded, want an error", method)
	}
	return err.Code
}

func (c *client) initialize() map[string]any {
	return c.initializeWith(map[string]any{})
}

// initializeWith initializes with the given clientCapabilities.
func (c *client) initializeWith(caps map[string]any) map[string]any {
	var res map[string]any
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "testeditor"},
		"clientCapabilities": caps}, &res)
	return res
}

func (c *client) newSession(cwd string) string {
	c.t.Helper()
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &res)
	if res.SessionID == "" {
		c.t.Fatal("session/new returned no sessionId")
	}
	return res.SessionID
}

func textPrompt(session, text string) map[string]any {
	return map[string]any{"sessionId": session, "prompt": []any{map[string]string{"type": "text", "text": text}}}
}

// prompt runs a turn and returns its stop reason.
func (c *client) prompt(session, text string) string {
	c.t.Helper()
	var res struct {
		StopReason string `json:"stopReason"`
	}
	c.call("session/prompt", textPrompt(session, text), &res)
	return res.StopReason
}

// promptAsync runs a turn in the background; the channel yields its stop
// reason.
func (c *client) promptAsync(session, text string) <-chan string {
	out := make(chan string, 1)
	go func() {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		if err := c.try("session/prompt", textPrompt(session, text), &res); err != nil {
			out <- "error: " + err.Message
			return
		}
		out <- res.StopReason
	}()
	return out
}

// seen returns the updates of one session so far. Notifications are
// ordered before the response of the request that caused them, so after a
// prompt returns, its updates are all here.
func (c *client) seen(session string) []update {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []update
	for _, u := range c.updates {
		if u.Session == session {
			out = append(out, u)
		}
	}
	return out
}

// text is the agent's streamed answer in a session.
func (c *client) text(session, kind string) string {
	var b strings.Builder
	for _, u := range c.seen(session) {
		if u.Kind != kind {
			continue
		}
		var m struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(u.Raw, &m)
		b.WriteString(m.Content.Text)
	}
	return b.String()
}

func kinds(us []update) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Kind)
	}
	return out
}
