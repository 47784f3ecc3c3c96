package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/config"
	"reasonix/policy"
	apiclient "reasonix/runner/client"
	"reasonix/runner/session"
)

// SteerMethod is the vendor extension that adds guidance to a running
// prompt; initialize advertises it under _meta["reasonix.io"].
const SteerMethod = "_reasonix.io/session/steer"

// ProtocolVersion is the ACP version spoken.
const ProtocolVersion = 1

// WorkModes are the values of --profile (the work_mode control).
var WorkModes = []string{"economy", "balanced", "delivery"}

// Config says how sessions are built. Settings is required.
type Config struct {
	// Settings is the loaded configuration every session is assembled from.
	Settings *config.Config
	// Model is the startup model reference ("" = the configured default).
	Model string
	// WorkMode is the startup work mode, one of WorkModes ("" = balanced).
	WorkMode string
	// Posture is the startup tool-approval posture; "" is [permissions]
	// posture, else ask. Under ask, calls that need a person are asked of
	// the editor's user.
	Posture policy.Posture
	// Models resolves a model reference; nil is session.ResolveModel on
	// Settings. Tests put a scripted provider here.
	Models func(ref string) (session.Model, error)
	// ProjectSettings, when set, is the configuration of a session's cwd:
	// its own reasonix.toml over the user's, with `reasonix run`'s trust
	// rules (an untrusted project file may only tighten). It is asked for
	// every local session; an error fails the session's opening. Nil is
	// Settings for every session. When Models is nil, each session's
	// models are resolved in its own configuration.
	ProjectSettings func(cwd string) (*config.Config, error)
	// Dir holds persisted sessions; "" is <data dir>/acp/sessions.
	Dir string
	// Logger receives diagnostics (never stdout); nil discards them.
	Logger *slog.Logger
	// Version is reported as agentInfo.version.
	Version string
	// Server, when set, makes every session a task of the service it
	// reaches (reasonix acp --server): session/list lists its tasks,
	// session/load follows one, session/new and session/prompt submit
	// and message them, and their approvals are decided through it as the
	// client's principal. Settings then only maps an editor's cwd to a
	// workspace ([[workspaces]]).
	Server *apiclient.Client
	// Attach is the command an editor's terminal runs to show a bash
	// command (`reasonix acp attach`), without the socket argument; nil
	// is this executable's `acp attach`.
	Attach []string
}

// Agent serves ACP on one connection. Build it with New; Serve runs it.
type Agent struct {
	cfg   Config
	store store
	conn  *sdk.Connection

	// remote is the service backend (Config.Server); nil runs sessions
	// here.
	remote *remote
	// ownModels: Config.Models was nil, so a session with its own
	// configuration resolves its models in it.
	ownModels bool

	mu       sync.Mutex
	client   string // the editor's name from initialize, for approval records
	caps     clientCaps
	sessions map[string]*live
	// terms is the attach socket of the editor's terminals, opened on
	// first use (terminal.go); attach is the command that attaches.
	terms  *terminals
	attach []string
}

// New checks cfg and returns an Agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Settings == nil {
		return nil, errors.New("acp: Settings is required")
	}
	cfg.WorkMode = cmp.Or(cfg.WorkMode, "balanced")
	if !validWorkMode(cfg.WorkMode) {
		return nil, fmt.Errorf("acp: work mode %q: one of economy, balanced, delivery", cfg.WorkMode)
	}
	cfg.Posture = cmp.Or(cfg.Posture, cfg.Settings.Permissions.Posture, policy.PostureAsk)
	ownModels := cfg.Models == nil
	if ownModels {
		set := cfg.Settings
		cfg.Models = func(ref string) (session.Model, error) { return session.ResolveModel(set, ref) }
	}
	cfg.Dir = cmp.Or(cfg.Dir, filepath.Join(cfg.Settings.DataDir(), "acp", "sessions"))
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{cfg: cfg, store: store{dir: cfg.Dir}, sessions: map[string]*live{}, ownModels: ownModels, attach: cfg.Attach}
	if len(a.attach) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("acp: this executable, for the editor's terminals: %w", err)
		}
		a.attach = []string{exe, "acp", "attach"}
	}
	if cfg.Server != nil {
		a.remote = newRemote(a, cfg.Server)
	}
	return a, nil
}

func validWorkMode(m string) bool {
	for _, w := range WorkModes {
		if m == w {
			return true
		}
	}
	return false
}

// Serve speaks ACP with the client on in and out until in ends or ctx is
// cancelled, then cancels running turns and closes every live session.
// Only protocol messages are written to out.
func (a *Agent) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	lw := &lineWriter{w: out}
	pr, pw := io.Pipe()
	a.conn = sdk.NewConnection(a.handle, lw, pr)
	a.conn.SetLogger(a.cfg.Logger)
	pumped := make(chan error, 1)
	go func() {
		err := pump(in, lw, pw)
		pw.Close()
		pumped <- err
	}()
	var err error
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	pr.CloseWithError(io.ErrClosedPipe)
	a.closeAll()
	a.mu.Lock()
	ts := a.terms
	a.terms = nil
	a.mu.Unlock()
	if ts != nil {
		ts.close()
	}
	if a.remote != nil {
		a.remote.closeAll()
	}
	select {
	case perr := <-pumped:
		err = cmp.Or(err, perr)
	default:
		// The input is still open (ctx ended first): its reader ends with
		// the process.
	}
	return err
}

// closeAll cancels every running turn and closes every live session.
func (a *Agent) closeAll() {
	a.mu.Lock()
	all := make([]*live, 0, len(a.sessions))
	for id, l := range a.sessions {
		all = append(all, l)
		delete(a.sessions, id)
	}
	a.mu.Unlock()
	for _, l := range all {
		l.close()
	}
}

// handle dispatches one request or notification. Unknown methods,
// including the unnamespaced session/steer, are -32601.
func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *sdk.RequestError) {
	if a.remote != nil {
		if res, rerr, ok := a.remote.handle(ctx, method, params); ok {
			return res, rerr
		}
	}
	switch method {
	case "initialize":
		return a.initialize(params)
	case "authenticate":
		// The terminal method runs `reasonix init` in the client; there
		// is nothing to check here afterwards but the next session/new.
		return map[string]any{}, nil
	case "session/new":
		return a.newSession(ctx, params)
	case "session/load":
		return a.loadSession(ctx, params, true)
	case "session/resume":
		return a.loadSession(ctx, params, false)
	case "session/prompt":
		return a.prompt(ctx, params)
	case "session/cancel":
		return nil, a.cancel(params)
	case "session/list":
		return a.list(params)
	case "session/close":
		return a.closeSession(params)
	case "session/delete":
		return a.deleteSession(params)
	case "session/set_mode":
		return a.setMode(ctx, params)
	case "session/set_config_option":
		return a.setConfigOption(ctx, params)
	case "session/set_model":
		return a.setModel(ctx, params)
	case SteerMethod:
		return a.steer(params)
	}
	return nil, sdk.NewMethodNotFound(method)
}

func decode(params json.RawMessage, v any) *sdk.RequestError {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("%v", err)
	}
	return nil
}

func invalidParams(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: -32602, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

func invalidRequest(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: -32600, Message: "Invalid request: " + fmt.Sprintf(format, args...)}
}

func internalError(err error) *sdk.RequestError {
	return &sdk.RequestError{Code: -32603, Message: err.Error()}
}

// initialize answers with the capabilities of the issue and the guide:
// sessions that load, list, resume, close and delete; text and embedded
// text context; MCP over HTTP; and the steer extension under _meta.
func (a *Agent) initialize(params json.RawMessage) (any, *sdk.RequestError) {
	var req struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
		ClientInfo      *struct {
			Name string `json:"name"`
		} `json:"clientInfo"`
		ClientCapabilities wireClientCaps `json:"clientCapabilities"`
	}
	if err := decode(params, &req); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.client = "editor"
	if req.ClientInfo != nil && req.ClientInfo.Name != "" {
		a.client = req.ClientInfo.Name
	}
	a.caps = req.ClientCapabilities.caps()
	a.mu.Unlock()
	sessionCaps := map[string]struct{}{"list": {}, "resume": {}, "close": {}, "delete": {}}
	meta := map[string]any{"sessionSteer": map[string]string{"method": SteerMethod}}
	if a.remote != nil {
		// A task is not the editor's to delete.
		delete(sessionCaps, "delete")
		meta["server"] = a.remote.c.BaseURL()
	}
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession:         true,
			SessionCapabilities: sessionCaps,
			PromptCapabilities:  promptCapabilities{EmbeddedContext: true},
			MCPCapabilities:     mcpCapabilities{HTTP: true},
			Meta:                map[string]any{"reasonix.io": meta},
		},
		AgentInfo: implementation{Name: "reasonix", Title: "Reasonix", Version: cmp.Or(a.cfg.Version, "dev")},
		AuthMethods: []authMethod{{
			ID: "reasonix-init", Name: "Set up Reasonix", Type: "terminal",
			Description: "Runs `reasonix init` to configure a model provider.",
			Args:        []string{"init"},
		}},
	}, nil
}

type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AgentInfo         implementation    `json:"agentInfo"`
	AuthMethods       []authMethod      `json:"authMethods"`
}

type agentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	SessionCapabilities map[string]struct{} `json:"sessionCapabilities"`
	PromptCapabilities  promptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     mcpCapabilities     `json:"mcpCapabilities"`
	Meta                map[string]any      `json:"_meta"`
}

type promptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	Version string `json:"version"`
}

type authMethod struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Type        string   `json:"type"`
	Args        []string `json:"args"`
}

func (a *Agent) clientName() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return cmp.Or(a.client, "editor")
}

// clientCaps is what the client said it can do in initialize.
type clientCaps struct {
	// readFile and writeFile: fs/read_text_file and fs/write_text_file.
	readFile, writeFile bool
	// terminal: terminal/create and the rest.
	terminal bool
	// elicitForm: elicitation/create in form mode (unstable in ACP).
	elicitForm bool
}

// wireClientCaps is clientCapabilities as sent; unknown fields are
// ignored, a missing one is false.
type wireClientCaps struct {
	FS struct {
		ReadTextFile  bool `json:"readTextFile"`
		WriteTextFile bool `json:"writeTextFile"`
	} `json:"fs"`
	Terminal    bool `json:"terminal"`
	Elicitation *struct {
		Form json.RawMessage `json:"form"`
	} `json:"elicitation"`
}

func (w wireClientCaps) caps() clientCaps {
	c := clientCaps{readFile: w.FS.ReadTextFile, writeFile: w.FS.WriteTextFile, terminal: w.Terminal}
	if e := w.Elicitation; e != nil {
		f := strings.TrimSpace(string(e.Form))
		c.elicitForm = f != "" && f != "null" && f != "false"
	}
	return c
}

func (a *Agent) clientCaps() clientCaps {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.caps
}

func (a *Agent) session(id string) (*live, *sdk.RequestError) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.sessions[id]
	if !ok {
		return nil, invalidParams("unknown session %q", id)
	}
	return l, nil
}

func now() time.Time { return time.Now().UTC() }
