package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/goals"
	"reasonix/internal/redact"
	"reasonix/policy"
	"reasonix/runner/session"
)

// live is an open session: its own assembled runner/session (policy,
// sandbox, tools, MCP set), its own agent and conversation, its own
// transcript. Nothing is shared between sessions but the configuration.
type live struct {
	a   *Agent
	id  string
	cwd string
	// set is the session's configuration (Config.ProjectSettings), models
	// resolves model references in it.
	set    *config.Config
	models func(ref string) (session.Model, error)
	sess   *session.Session
	file   *os.File
	tr     *agent.Transcript

	// plugins are the client's MCP servers, kept for rebuilds.
	plugins []config.Plugin
	// commands are the workspace's custom commands.
	commands *recipe.Commands
	// skills are the checkout's skills, read when the session opened.
	skills *recipe.Skills

	mu    sync.Mutex
	meta  meta
	ctl   controls
	agent *agent.Agent
	turn  *turn
	// announced is set once available_commands_update was sent.
	announced bool
	// goalAgent is the running goal turn's agent, which a steer reaches;
	// pendingSteer holds steers made between two goal turns.
	goalAgent    *agent.Agent
	pendingSteer []string
	// waitingGoal is a goal stopped on a question its person will answer
	// in the next goal-mode prompt (question.go); a prompt in another
	// mode drops it.
	waitingGoal *goals.State
	// questions numbers the goal questions asked as tool calls.
	questions atomic.Int64
	// plan: the session is in plan mode (modeGate refuses writers).
	plan atomic.Bool
	// shown holds the ids of the tool calls the editor was shown, which a
	// terminal may show (terminal.go); terminals maps a call a terminal
	// showed to the terminal's id, for its completed update. noTerminal:
	// a terminal did not attach, so commands are shown as text.
	shown, terminals sync.Map
	noTerminal       atomic.Bool
	// inGoal keeps a goal's turn messages out of the transcript's
	// conversation (see goalTurn).
	inGoal atomic.Bool
	// usage counts the running prompt's model calls.
	usage turnUsage
}

// turn is a running session/prompt.
type turn struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

var errCancelled = errors.New("acp: the client cancelled the turn")

// setupError is a model that cannot be used yet (none configured, its key
// unset): ACP's auth_required, so the editor offers the terminal method
// that runs reasonix init.
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// notFound is ACP's resource_not_found, which clients treat as done for
// session/close and session/delete (both are idempotent).
func notFound(id string) *sdk.RequestError {
	return &sdk.RequestError{Code: -32002, Message: fmt.Sprintf("Resource not found: session %q", id)}
}

// openError is the JSON-RPC error of a session that could not be opened.
func openError(err error) *sdk.RequestError {
	var se *setupError
	if errors.As(err, &se) {
		return &sdk.RequestError{Code: -32000, Message: "Authentication required: " + se.Error()}
	}
	if ce := (*configError)(nil); errors.As(err, &ce) {
		return invalidParams("%v", ce)
	}
	return internalError(err)
}

type sessionParams struct {
	SessionID  string          `json:"sessionId"`
	Cwd        string          `json:"cwd"`
	MCPServers json.RawMessage `json:"mcpServers"`
}

// workdir checks a client's cwd: absolute, an existing directory, and
// resolved so the sandbox sees the real path.
func workdir(cwd string) (string, *sdk.RequestError) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", invalidParams("cwd must be an absolute path, got %q", cwd)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(cwd))
	if err != nil {
		return "", invalidParams("cwd %s: %v", cwd, err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", invalidParams("cwd %s is not a directory", cwd)
	}
	return real, nil
}

func (a *Agent) newSession(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	dir, rerr := workdir(p.Cwd)
	if rerr != nil {
		return nil, rerr
	}
	plugins, err := pluginsFrom(p.MCPServers)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	t := now()
	m := meta{ID: newSessionID(), Cwd: dir, Created: t, Updated: t}
	l, err := a.open(ctx, m, plugins, nil)
	if err != nil {
		a.store.remove(m.ID)
		return nil, openError(err)
	}
	st := l.state()
	st["sessionId"] = l.id
	return st, nil
}

// loadSession opens a persisted session: its conversation is restored and,
// for session/load, replayed to the client as session/update notifications
// before the response; session/resume restores it silently.
func (a *Agent) loadSession(ctx context.Context, params json.RawMessage, replay bool) (any, *sdk.RequestError) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	m, err := a.store.meta(p.SessionID)
	if err != nil {
		return nil, invalidParams("unknown session %q", p.SessionID)
	}
	if p.Cwd != "" {
		dir, rerr := workdir(p.Cwd)
		if rerr != nil {
			return nil, rerr
		}
		m.Cwd = dir
	}
	plugins, err := pluginsFrom(p.MCPServers)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	a.mu.Lock()
	_, open := a.sessions[m.ID]
	a.mu.Unlock()
	if open {
		return nil, invalidRequest("session %s is already open; close it first", m.ID)
	}
	history, err := a.store.history(m.ID)
	if err != nil {
		return nil, internalError(err)
	}
	l, err := a.open(ctx, m, plugins, history)
	if err != nil {
		return nil, openError(err)
	}
	if replay {
		a.replay(ctx, m.ID, history)
	}
	// The client knows a loaded session's id, so it can take the
	// commands now; a new session gets them with its first prompt.
	l.announced = true
	a.notifyRaw(l.id, l.availableCommands())
	return l.state(), nil
}

// open assembles a session and registers it.
func (a *Agent) open(ctx context.Context, m meta, plugins []config.Plugin, history []agent.Message) (*live, error) {
	set, models, err := a.projectSettings(m.Cwd)
	if err != nil {
		return nil, err
	}
	f, err := a.store.create(m)
	if err != nil {
		return nil, err
	}
	l := &live{a: a, id: m.ID, cwd: m.Cwd, set: set, models: models, meta: m, file: f, tr: agent.NewTranscript(f), plugins: plugins,
		ctl: controls{mode: modeNormal, model: a.cfg.Model, workMode: a.cfg.WorkMode, posture: a.cfg.Posture}}
	l.usage.prices = session.NewPrices(set)
	l.commands, _ = recipe.LoadDirs(set.Home(), m.Cwd)
	// The editor's own checkout: its skills are the person's, as for
	// `reasonix run`; each is also a command (a command file of the same
	// name wins).
	l.skills = session.CheckoutSkills(set.Home(), &set.Skills, m.Cwd)
	l.skills.Commands(l.commands)
	if !set.Skills.SuppressWarnings {
		for _, w := range l.skills.Warnings {
			a.cfg.Logger.Warn("acp: skill skipped", "problem", w.String())
		}
	}
	sess, ag, err := l.build(ctx, l.ctl, history, nil)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.sess, l.agent = sess, ag
	a.mu.Lock()
	a.sessions[l.id] = l
	a.mu.Unlock()
	return l, nil
}

// projectSettings is the configuration of a session in cwd and the model
// resolver that goes with it.
func (a *Agent) projectSettings(cwd string) (*config.Config, func(string) (session.Model, error), error) {
	if a.cfg.ProjectSettings == nil {
		return a.cfg.Settings, a.cfg.Models, nil
	}
	set, err := a.cfg.ProjectSettings(cwd)
	if err != nil {
		return nil, nil, &configError{err}
	}
	if set == nil || set == a.cfg.Settings || !a.ownModels {
		return cmp.Or(set, a.cfg.Settings), a.cfg.Models, nil
	}
	return set, func(ref string) (session.Model, error) { return session.ResolveModel(set, ref) }, nil
}

// configError is a session cwd whose configuration cannot be used (an
// untrusted project file that loosens it, a broken file): invalid params,
// saying what to fix.
type configError struct{ err error }

func (e *configError) Error() string { return "the configuration of this cwd: " + e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// build assembles the session's controller through runner/session, the
// same door as `reasonix run` and the service's workers, with the
// conversation so far and the grants made so far.
func (l *live) build(ctx context.Context, ctl controls, history []agent.Message, grants []string) (*session.Session, *agent.Agent, error) {
	a := l.a
	set := l.set
	model, err := l.models(ctl.model)
	if err != nil {
		return nil, nil, &setupError{err}
	}
	if e := ctl.requestEffort(); e != "" {
		model.Effort = e
	}
	// The editor's MCP servers' env and header values are secrets like
	// the configured plugins': masked in every tool's output.
	secrets := session.Secrets(set)
	for _, p := range l.plugins {
		for _, v := range p.Env {
			secrets = append(secrets, v)
		}
		for _, v := range p.Headers {
			secrets = append(secrets, v)
		}
	}
	sess, err := session.New(ctx, session.Config{
		Redactor: redact.New(secrets...),
		Settings: set,
		Workdir:  l.cwd,
		Posture:  ctl.posture,
		Model:    model,
		Models:   l.models,
		Approver: policy.ApproverFunc(l.approve),
		Files:    l.files(),
		Grants:   grants,
		Plugins:  mergePlugins(set.Plugins, l.plugins),
		Observer: l.observe,
		Logger:   a.cfg.Logger,
		Skills:   l.skills, // and the sub-agent profiles among them
		// The editor's own checkout: its files are the person's.
		Instructions:    session.CheckoutInstructions(set.Home(), l.cwd).Text,
		DirInstructions: session.CheckoutDirInstructions(l.cwd),
	})
	if err != nil {
		return nil, nil, err
	}
	// A loaded or rebuilt session keeps what its conversation read, so its
	// edits are not refused as unread (agent.Observed).
	agent.Reobserve(sess.Env, history)
	// The model's reasoning streams as agent_thought_chunk, in goal turns
	// too (they are built from sess.Agent); it is never persisted.
	sess.Agent.Thinking = l.think
	cfg := sess.Agent
	cfg.History = history
	cfg.Gate = l.modeGate(cfg.Gate)
	ag, err := agent.New(cfg)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	return sess, ag, nil
}

// mergePlugins is the session's MCP set: the configured plugins and the
// client's; a client server of the same name replaces the configured one.
func mergePlugins(configured, client []config.Plugin) []config.Plugin {
	if len(client) == 0 {
		return configured
	}
	out := slices.DeleteFunc(slices.Clone(configured), func(p config.Plugin) bool {
		return slices.ContainsFunc(client, func(q config.Plugin) bool { return q.Name == p.Name })
	})
	return append(out, client...)
}

// observe records an event in the session's transcript and streams it to
// the client.
func (l *live) observe(e agent.Event) {
	if e.Type != agent.EventMessage || !l.inGoal.Load() {
		l.tr.Observe(e)
	}
	l.usage.observe(e)
	ups := updatesFor(l.cwd, e)
	switch e.Type {
	case agent.EventMessage:
		if e.Message != nil && e.Message.Role == agent.RoleAssistant {
			for _, c := range e.Message.ToolCalls {
				l.shown.Store(c.ID, true)
			}
		}
	case agent.EventToolFinished, agent.EventToolRefused:
		if e.Call == nil {
			break
		}
		l.shown.Delete(e.Call.ID)
		if id, ok := l.terminals.LoadAndDelete(e.Call.ID); ok && e.Type == agent.EventToolFinished {
			status := sdk.ToolCallStatusCompleted
			if e.IsError {
				status = sdk.ToolCallStatusFailed
			}
			ups = []sdk.SessionUpdate{finishTerminal(e.Call.ID, id.(string), status, e.Result)}
		}
	}
	for _, u := range ups {
		l.a.notify(l.id, u)
	}
}

func (a *Agent) notify(id string, u sdk.SessionUpdate) {
	if err := a.conn.SendNotification(context.Background(), "session/update", sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u}); err != nil {
		a.cfg.Logger.Debug("acp: session/update not sent", "err", err)
	}
}

type promptParams struct {
	SessionID string            `json:"sessionId"`
	Prompt    []json.RawMessage `json:"prompt"`
}

// promptInput is the session and the text of a prompt or steer request:
// an unknown session, a prompt that is not text and an empty one are
// invalid params.
func (a *Agent) promptInput(params json.RawMessage) (*live, string, *sdk.RequestError) {
	var p promptParams
	if err := decode(params, &p); err != nil {
		return nil, "", err
	}
	l, rerr := a.session(p.SessionID)
	if rerr != nil {
		return nil, "", rerr
	}
	text, err := promptText(p.Prompt)
	if err != nil {
		return nil, "", invalidParams("%v", err)
	}
	if strings.TrimSpace(text) == "" {
		return nil, "", invalidParams("the prompt is empty")
	}
	return l, text, nil
}

// prompt runs one turn and answers with its stop reason; the updates were
// streamed while it ran.
func (a *Agent) prompt(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	l, text, rerr := a.promptInput(params)
	if rerr != nil {
		return nil, rerr
	}
	typed := text
	text, err := l.expandCommand(ctx, text)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	// What the person asked for, before @ references are expanded: the
	// Coordinator judges only it.
	pristine := text
	l.mu.Lock()
	refSess := l.sess
	l.mu.Unlock()
	if refSess != nil {
		// @path and @server:uri become tagged blocks after the prompt.
		text = refSess.ExpandReferences(ctx, text)
	}
	tctx, cancel := context.WithCancelCause(ctx)
	if a.clientCaps().terminal {
		// Its foreground commands are shown in the editor's terminals.
		tctx = agent.ContextWithLiveOutput(tctx, l.liveOutput)
	}
	t := &turn{cancel: cancel, done: make(chan struct{})}
	l.mu.Lock()
	if l.turn != nil {
		l.mu.Unlock()
		cancel(nil)
		return nil, invalidRequest("session %s is already running a prompt", l.id)
	}
	l.turn = t
	ag, sess, mode := l.agent, l.sess, l.ctl.mode
	announce := !l.announced
	l.announced = true
	if l.meta.Title == "" {
		l.meta.Title = title(typed)
	}
	if mode == modePlan {
		text = planNote + text
	}
	if mode != modeGoal {
		l.waitingGoal = nil
	}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.turn = nil
		l.meta.Updated = now()
		m := l.meta
		l.mu.Unlock()
		if err := a.store.saveMeta(m); err != nil {
			a.cfg.Logger.Warn("acp: saving the session", "session", l.id, "err", err)
		}
		cancel(nil)
		close(t.done)
	}()
	if announce {
		a.notifyRaw(l.id, l.availableCommands())
	}
	l.usage.reset()
	stop := func(reason string) (any, *sdk.RequestError) {
		return l.usage.addTo(map[string]any{"stopReason": reason}), nil
	}
	if mode == modeGoal {
		out, rerr := l.goalTurn(tctx, sess, text, typed, pristine)
		if errors.Is(context.Cause(tctx), errCancelled) {
			return stop("cancelled")
		}
		if m, ok := out.(map[string]any); ok && rerr == nil {
			return l.usage.addTo(m), nil
		}
		return out, rerr
	}
	res := l.coordinatedRun(tctx, sess, ag, pristine, text, mode == modePlan)
	if errors.Is(context.Cause(tctx), errCancelled) {
		return stop("cancelled")
	}
	switch res.Outcome {
	case agent.OutcomeSucceeded, agent.OutcomeBlocked:
		return stop(finishStop(res.FinishReason))
	case agent.OutcomeStepLimit:
		return stop("max_turn_requests")
	case agent.OutcomeInterrupted:
		return stop("cancelled")
	}
	msg := "the turn failed"
	if res.Err != nil {
		msg += ": " + res.Err.Error()
	}
	return nil, &sdk.RequestError{Code: -32603, Message: msg}
}

// finishStop is the stop reason of a turn that ended with an answer: the
// provider's finish reason says whether the answer hit the output limit
// (max_tokens) or the model refused (refusal).
func finishStop(finish string) string {
	switch finish {
	case "length", "max_tokens":
		return "max_tokens"
	case "content_filter", "refusal":
		return "refusal"
	}
	return "end_turn"
}

// think streams a piece of the model's reasoning to the editor.
func (l *live) think(text string) {
	l.a.notify(l.id, sdk.UpdateAgentThoughtText(text))
}

// title is a session's title in session/list: the first line of its first
// prompt, bounded.
func title(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if len(line) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}

// promptText flattens a prompt's content blocks into the user message:
// text as it is, an embedded text resource as a tagged block naming its
// URI, a resource link as its URI. Images and audio are not advertised
// and are refused.
func promptText(blocks []json.RawMessage) (string, error) {
	var b strings.Builder
	for i, raw := range blocks {
		var c struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			URI      string `json:"uri"`
			Resource *struct {
				URI  string  `json:"uri"`
				Text *string `json:"text"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return "", fmt.Errorf("prompt[%d]: %v", i, err)
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		switch c.Type {
		case "text":
			b.WriteString(c.Text)
		case "resource":
			if c.Resource == nil || c.Resource.Text == nil {
				return "", fmt.Errorf("prompt[%d]: only text resources are supported", i)
			}
			fmt.Fprintf(&b, "<context uri=%q>\n%s\n</context>", c.Resource.URI, *c.Resource.Text)
		case "resource_link":
			fmt.Fprintf(&b, "[%s]", c.URI)
		default:
			return "", fmt.Errorf("prompt[%d]: content of type %q is not supported (text and embedded text resources are)", i, c.Type)
		}
	}
	return b.String(), nil
}

func (a *Agent) cancel(params json.RawMessage) *sdk.RequestError {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return err
	}
	l, rerr := a.session(p.SessionID)
	if rerr != nil {
		return rerr
	}
	l.cancelTurn()
	return nil
}

// cancelTurn cancels the running turn, if any, and waits for it to end.
func (l *live) cancelTurn() {
	l.mu.Lock()
	t := l.turn
	l.mu.Unlock()
	if t != nil {
		t.cancel(errCancelled)
	}
}

// steer queues guidance for the running turn: it becomes a user message
// before the next model request, without cancelling the turn.
func (a *Agent) steer(params json.RawMessage) (any, *sdk.RequestError) {
	l, text, rerr := a.promptInput(params)
	if rerr != nil {
		return nil, rerr
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.turn == nil {
		return nil, invalidRequest("session %s has no active prompt; send the guidance as a new prompt", l.id)
	}
	switch {
	case l.goalAgent != nil:
		l.goalAgent.Steer(text)
	case l.inGoal.Load():
		l.pendingSteer = append(l.pendingSteer, text)
	default:
		l.agent.Steer(text)
	}
	return map[string]any{}, nil
}

func (a *Agent) list(params json.RawMessage) (any, *sdk.RequestError) {
	var p struct {
		Cwd string `json:"cwd"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	filter := ""
	if p.Cwd != "" {
		if !filepath.IsAbs(p.Cwd) {
			return nil, invalidParams("cwd must be an absolute path")
		}
		filter = filepath.Clean(p.Cwd)
		if real, err := filepath.EvalSymlinks(filter); err == nil {
			filter = real
		}
	}
	// Live sessions are persisted from their first moment, so the store
	// lists them too; a live one's meta is the freshest.
	all := a.store.list()
	a.mu.Lock()
	for i, m := range all {
		if l, ok := a.sessions[m.ID]; ok {
			l.mu.Lock()
			all[i] = l.meta
			l.mu.Unlock()
		}
	}
	a.mu.Unlock()
	sessions := []map[string]any{}
	for _, m := range all {
		if filter != "" && m.Cwd != filter {
			continue
		}
		s := map[string]any{"sessionId": m.ID, "cwd": m.Cwd, "updatedAt": m.Updated.Format("2006-01-02T15:04:05Z07:00")}
		if m.Title != "" {
			s["title"] = m.Title
		}
		sessions = append(sessions, s)
	}
	return map[string]any{"sessions": sessions}, nil
}

func (a *Agent) closeSession(params json.RawMessage) (any, *sdk.RequestError) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a.mu.Lock()
	l, ok := a.sessions[p.SessionID]
	delete(a.sessions, p.SessionID)
	a.mu.Unlock()
	if !ok {
		return nil, notFound(p.SessionID)
	}
	l.close()
	return map[string]any{}, nil
}

func (a *Agent) deleteSession(params json.RawMessage) (any, *sdk.RequestError) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	a.mu.Lock()
	l, ok := a.sessions[p.SessionID]
	delete(a.sessions, p.SessionID)
	a.mu.Unlock()
	if ok {
		l.close()
	}
	if err := a.store.remove(p.SessionID); err != nil {
		if errors.Is(err, errNoSession) {
			return nil, notFound(p.SessionID)
		}
		return nil, internalError(err)
	}
	return map[string]any{}, nil
}

// close cancels the running turn, waits for it, and releases the
// session's plugins, sandbox and transcript. History stays on disk.
func (l *live) close() {
	l.mu.Lock()
	t := l.turn
	l.mu.Unlock()
	if t != nil {
		t.cancel(errCancelled)
		<-t.done
	}
	l.mu.Lock()
	sess := l.sess
	l.sess = nil
	l.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
	l.file.Close()
}
