package acp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/config"
	"reasonix/runner/apitype"
	apiclient "reasonix/runner/client"
)

// remote is the second backend behind the same dispatch: with --server,
// every session is a task of the service, reached through runner/client
// as the token's principal. The service is the authority: who may read,
// message, cancel and decide is checked there, never here.
type remote struct {
	a   *Agent
	c   *apiclient.Client
	dir string // the process's directory, for tasks with no local cwd

	mu       sync.Mutex
	sessions map[string]*rsession
}

// rsession is an editor's view of one task: replayed, followed live, its
// approvals asked of the editor.
type rsession struct {
	r   *remote
	id  string // the ACP session id: the task's, or a new session's own
	cwd string

	ctx    context.Context // the session's life; close cancels it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	// task is the task's id; "" until a new session's first prompt.
	task string
	// workspace and goal are what a new session submits with.
	workspace string
	goal      bool
	lastSeq   int64
	following bool
	closed    bool
	waiting   *waiter
	// asked are the approvals (by id) and goal questions ("question:<seq>")
	// asked of the editor, with the cancel of the request while it is open.
	asked map[string]context.CancelFunc
	// asking counts the goal questions being asked: the follower keeps
	// following the blocked task meanwhile, for the continuation an
	// answer brings.
	asking int
	// ownBlock is set when a live question is asked of the editor: the
	// terminal state that follows (the task blocked on the question) does
	// not end the running prompt, which the person's choice ends or
	// continues.
	ownBlock bool
	// questions numbers the goal-question-<n> cards.
	questions atomic.Int64
}

// waiter is a running session/prompt: armed once the task's log shows
// the prompt's own message, it ends at the task's next terminal state or
// question.
type waiter struct {
	text  string
	armed bool
	done  chan string // the stop reason, sent once
}

func newRemote(a *Agent, c *apiclient.Client) *remote {
	dir, _ := os.Getwd()
	return &remote{a: a, c: c, dir: cmp.Or(dir, string(filepath.Separator)), sessions: map[string]*rsession{}}
}

// handle is the remote backend's dispatch of the session methods; ok is
// false for the methods both backends share (initialize, authenticate).
func (r *remote) handle(ctx context.Context, method string, params json.RawMessage) (res any, rerr *sdk.RequestError, ok bool) {
	switch method {
	case "session/new":
		res, rerr = r.newSession(ctx, params)
	case "session/load":
		res, rerr = r.load(ctx, params, true)
	case "session/resume":
		res, rerr = r.load(ctx, params, false)
	case "session/prompt":
		res, rerr = r.prompt(ctx, params)
	case "session/cancel":
		rerr = r.cancel(ctx, params)
	case "session/list":
		res, rerr = r.list(ctx, params)
	case "session/close":
		res, rerr = r.closeSession(params)
	case SteerMethod:
		res, rerr = r.steer(ctx, params)
	case "session/delete", "session/set_mode", "session/set_config_option", "session/set_model":
		rerr = invalidRequest("%s is not available for the service's tasks (reasonix acp --server)", method)
	default:
		return nil, nil, false
	}
	return res, rerr, true
}

// apiError is the JSON-RPC error of a call the service refused or could
// not be asked; its words are the service's (they hold no secret).
func apiError(err error) *sdk.RequestError {
	var e *apiclient.Error
	switch {
	case errors.Is(err, apiclient.ErrUnauthorized):
		return &sdk.RequestError{Code: -32000, Message: "Authentication required: the service refused the API token (set REASONIX_API_TOKEN)"}
	case errors.As(err, &e) && (e.Status == 400 || e.Status == 403 || e.Status == 409):
		return invalidRequest("the service refused: %s", e.Message)
	case errors.As(err, &e):
		return &sdk.RequestError{Code: -32603, Message: "the service answered: " + e.Message}
	}
	return &sdk.RequestError{Code: -32603, Message: "cannot reach the service: " + err.Error()}
}

type remoteNewParams struct {
	Cwd        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	Meta       struct {
		Reasonix struct {
			Workspace string `json:"workspace"`
			Goal      bool   `json:"goal"`
		} `json:"reasonix.io"`
	} `json:"_meta"`
}

// newSession opens a session bound to a workspace of the service; its
// first prompt submits the task. The workspace is named in
// _meta["reasonix.io"].workspace or found from cwd.
func (r *remote) newSession(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p remoteNewParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	dir, rerr := workdir(p.Cwd)
	if rerr != nil {
		return nil, rerr
	}
	if len(p.MCPServers) > 0 {
		r.a.cfg.Logger.Warn("acp: the editor's MCP servers are not used by the service's tasks", "servers", len(p.MCPServers))
	}
	// The round trip also proves the service answers and takes the
	// token, so a wrong token shows now, not at the first prompt.
	list, err := r.workspaces(ctx)
	if err != nil {
		return nil, apiError(err)
	}
	ws := p.Meta.Reasonix.Workspace
	if ws == "" {
		var ok bool
		if ws, ok = workspaceFor(dir, list); !ok {
			return nil, invalidParams("%v", noWorkspace(dir, list))
		}
	}
	s := r.open("s_"+randomID(), dir)
	s.workspace, s.goal = ws, p.Meta.Reasonix.Goal
	return map[string]any{"sessionId": s.id, "_meta": map[string]any{"reasonix.io": map[string]any{"workspace": ws}}}, nil
}

// workspaces is the service's workspaces, as GET /api/v1/workspaces lists
// them (repositories as the server sees them: URLs match the checkout's
// remotes wherever the editor runs); the configuration `reasonix acp`
// loaded when the service is older than that route.
func (r *remote) workspaces(ctx context.Context) ([]config.Workspace, error) {
	got, err := r.c.Workspaces(ctx)
	if errors.Is(err, apiclient.ErrNotFound) {
		return r.a.cfg.Settings.Workspaces, nil
	}
	if err != nil {
		return nil, err
	}
	list := make([]config.Workspace, 0, len(got))
	for _, w := range got {
		list = append(list, config.Workspace{Name: w.Name, Repo: w.Repo, Base: w.Base})
	}
	return list, nil
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// open registers a session.
func (r *remote) open(id, cwd string) *rsession {
	ctx, cancel := context.WithCancel(context.Background())
	s := &rsession{r: r, id: id, cwd: cwd, ctx: ctx, cancel: cancel, asked: map[string]context.CancelFunc{}}
	r.mu.Lock()
	r.sessions[id] = s
	r.mu.Unlock()
	return s
}

func (r *remote) session(id string) (*rsession, *sdk.RequestError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok {
		return nil, invalidParams("unknown session %q", id)
	}
	return s, nil
}

// load opens task sessionId: session/load replays its log as
// session/update notifications before answering; both then follow it
// live while it runs and ask the editor about its pending approvals.
func (r *remote) load(ctx context.Context, params json.RawMessage, replay bool) (any, *sdk.RequestError) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	r.mu.Lock()
	open := false
	for _, s := range r.sessions {
		s.mu.Lock()
		open = open || s.id == p.SessionID || s.task == p.SessionID
		s.mu.Unlock()
	}
	r.mu.Unlock()
	if open {
		return nil, invalidRequest("session %s is already open; close it first", p.SessionID)
	}
	t, err := r.c.Task(ctx, p.SessionID)
	if errors.Is(err, apiclient.ErrNotFound) {
		return nil, invalidParams("unknown session %q", p.SessionID)
	}
	if err != nil {
		return nil, apiError(err)
	}
	cwd := ""
	if p.Cwd != "" {
		dir, rerr := workdir(p.Cwd)
		if rerr != nil {
			return nil, rerr
		}
		cwd = dir
	}
	cwd = cmp.Or(cwd, workspaceDir(t.Workspace, r.a.cfg.Settings.Workspaces), r.dir)
	// Read the stored log before registering, so a failure leaves nothing.
	var log []apitype.Event
	for after := int64(0); ; {
		page, err := r.c.Events(ctx, t.ID, after, 1000)
		if err != nil {
			return nil, apiError(err)
		}
		log = append(log, page...)
		if len(page) < 1000 {
			break
		}
		after = page[len(page)-1].Seq
	}
	s := r.open(t.ID, cwd)
	s.task = t.ID
	ended := false
	var unanswered openQuestion
	for _, ev := range log {
		if replay {
			s.show(ev)
		}
		s.lastSeq = ev.Seq
		ended = ev.EndsTask()
		unanswered.see(ev)
	}
	if !ended && !t.State.Terminal() {
		s.askPending(ctx)
		s.follow()
	} else if t.State == apitype.StateBlocked && unanswered.text != "" {
		// Blocked on a goal's question nobody has answered yet: ask it,
		// and follow the task for the continuation an answer (this
		// editor's or anyone's) brings.
		s.askQuestion(unanswered.seq, unanswered.text)
		s.follow()
	}
	return map[string]any{"_meta": map[string]any{"reasonix.io": taskMeta(t)}}, nil
}

func taskMeta(t apitype.Task) map[string]any {
	return map[string]any{"state": t.State, "workspace": t.Workspace, "source": t.Source, "requester": t.Requester}
}

// list lists the service's tasks as sessions, newest first, a page of the
// service's at a time (cursor is the service's); cwd keeps the tasks of
// the workspace it maps to. A task open in a session is listed under that
// session's id.
func (r *remote) list(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p struct {
		Cwd    string `json:"cwd"`
		Cursor string `json:"cursor"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ws, filter := "", false
	if p.Cwd != "" {
		if !filepath.IsAbs(p.Cwd) {
			return nil, invalidParams("cwd must be an absolute path")
		}
		dir := filepath.Clean(p.Cwd)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		list, err := r.workspaces(ctx)
		if err != nil {
			return nil, apiError(err)
		}
		var ok bool
		if ws, ok = workspaceFor(dir, list); !ok {
			return map[string]any{"sessions": []any{}}, nil
		}
		filter = true
	}
	page, err := r.c.Tasks(ctx, apiclient.TaskFilter{Cursor: p.Cursor, Limit: 200})
	if err != nil {
		return nil, apiError(err)
	}
	bound := map[string]string{}
	r.mu.Lock()
	for id, s := range r.sessions {
		s.mu.Lock()
		if s.task != "" {
			bound[s.task] = id
		}
		s.mu.Unlock()
	}
	r.mu.Unlock()
	sessions := []map[string]any{}
	for _, t := range page.Tasks {
		if filter && t.Workspace != ws {
			continue
		}
		cwd := cmp.Or(workspaceDir(t.Workspace, r.a.cfg.Settings.Workspaces), r.dir)
		if filter {
			cwd = filepath.Clean(p.Cwd)
		}
		s := map[string]any{"sessionId": cmp.Or(bound[t.ID], t.ID), "cwd": cwd,
			"updatedAt": t.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z07:00"),
			"_meta":     map[string]any{"reasonix.io": taskMeta(t)}}
		if ti := title(t.Prompt); ti != "" {
			s["title"] = ti
		}
		sessions = append(sessions, s)
	}
	out := map[string]any{"sessions": sessions}
	if page.NextCursor != "" {
		out["nextCursor"] = page.NextCursor
	}
	return out, nil
}

// prompt submits a new session's task, or sends the text to the task
// (the message API: it steers a running task, answers a goal's question,
// continues a finished one), and answers when the task ends or asks a
// question; the task's events stream meanwhile.
func (r *remote) prompt(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p promptParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s, rerr := r.session(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	text, err := promptText(p.Prompt)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	if strings.TrimSpace(text) == "" {
		return nil, invalidParams("the prompt is empty")
	}
	w := &waiter{text: text, done: make(chan string, 1)}
	s.mu.Lock()
	if s.waiting != nil {
		s.mu.Unlock()
		return nil, invalidRequest("session %s is already running a prompt", s.id)
	}
	s.waiting = w
	task, ws, goal := s.task, s.workspace, s.goal
	s.mu.Unlock()
	fail := func(err error) (any, *sdk.RequestError) {
		s.mu.Lock()
		if s.waiting == w {
			s.waiting = nil
		}
		s.mu.Unlock()
		return nil, apiError(err)
	}
	if task == "" {
		sub, err := r.c.Submit(ctx, apitype.SubmitRequest{Prompt: text, Workspace: ws, Goal: goal},
			apiclient.IdempotencyKey("acp:"+s.id))
		if err != nil {
			return fail(err)
		}
		s.mu.Lock()
		s.task = sub.ID
		w.armed = true // every event of a new task is this prompt's
		s.mu.Unlock()
		r.a.notifyRaw(s.id, map[string]any{"sessionUpdate": "agent_thought_chunk",
			"content": map[string]any{"type": "text", "text": "Submitted task " + sub.ID + " to workspace " + ws + "\n"},
			"_meta":   map[string]any{"reasonix.io": map[string]any{"taskId": sub.ID}}})
	} else if _, err := r.c.Message(ctx, task, text); err != nil {
		return fail(err)
	}
	s.follow()
	select {
	case reason := <-w.done:
		return map[string]any{"stopReason": reason}, nil
	case <-ctx.Done():
		return nil, &sdk.RequestError{Code: -32603, Message: "the prompt was abandoned"}
	case <-s.ctx.Done():
		return map[string]any{"stopReason": "cancelled"}, nil
	}
}

// steer sends guidance to the task without waiting for it (the message
// API, as a prompt does).
func (r *remote) steer(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p promptParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s, rerr := r.session(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	text, err := promptText(p.Prompt)
	if err != nil || strings.TrimSpace(text) == "" {
		return nil, invalidParams("the prompt is empty or not text")
	}
	s.mu.Lock()
	task, running := s.task, s.waiting != nil
	s.mu.Unlock()
	if task == "" || !running {
		return nil, invalidRequest("session %s has no active prompt; send the guidance as a new prompt", s.id)
	}
	if _, err := r.c.Message(ctx, task, text); err != nil {
		return nil, apiError(err)
	}
	return map[string]any{}, nil
}

// cancel cancels the session's task through the service (its requester
// or an admin may) and ends a running prompt with cancelled.
func (r *remote) cancel(ctx context.Context, params json.RawMessage) *sdk.RequestError {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return err
	}
	s, rerr := r.session(p.SessionID)
	if rerr != nil {
		return rerr
	}
	s.mu.Lock()
	task := s.task
	for _, stop := range s.asked {
		if stop != nil {
			stop()
		}
	}
	s.mu.Unlock()
	if task != "" {
		if _, err := r.c.Cancel(ctx, task); err != nil {
			s.say("The service did not cancel task " + task + ": " + refusal(err))
		}
	}
	s.stop("cancelled")
	return nil
}

func (r *remote) closeSession(params json.RawMessage) (any, *sdk.RequestError) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	r.mu.Lock()
	s, ok := r.sessions[p.SessionID]
	delete(r.sessions, p.SessionID)
	r.mu.Unlock()
	if !ok {
		return nil, notFound(p.SessionID)
	}
	s.close()
	return map[string]any{}, nil
}

func (r *remote) closeAll() {
	r.mu.Lock()
	all := make([]*rsession, 0, len(r.sessions))
	for id, s := range r.sessions {
		all = append(all, s)
		delete(r.sessions, id)
	}
	r.mu.Unlock()
	for _, s := range all {
		s.close()
	}
}

// close stops following the task and withdraws open permission requests;
// the task itself goes on.
func (s *rsession) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// stop ends the running prompt, if any, with reason.
func (s *rsession) stop(reason string) {
	s.mu.Lock()
	w := s.waiting
	s.waiting = nil
	s.mu.Unlock()
	if w != nil {
		w.done <- reason
	}
}

// say shows a line from Reasonix (not the task's agent) in the session.
func (s *rsession) say(text string) {
	s.r.a.notify(s.id, sdk.UpdateAgentMessageText("\n[reasonix] "+text+"\n"))
}

// refusal is the service's own words for a refused call.
func refusal(err error) string {
	var e *apiclient.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// follow streams the task's new events to the editor until the task
// ends; a prompt that is still waiting then keeps it followed (its
// message continues the task). One follower per session.
func (s *rsession) follow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.following || s.closed || s.task == "" {
		return
	}
	s.following = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			s.mu.Lock()
			task, after := s.task, s.lastSeq
			s.mu.Unlock()
			var ferr error
			for ev, err := range s.r.c.Watch(s.ctx, task, after) {
				if err != nil {
					ferr = err
					break
				}
				s.take(ev)
			}
			s.mu.Lock()
			again := ferr == nil && (s.waiting != nil || s.asking > 0) && s.ctx.Err() == nil
			if !again {
				s.following = false
			}
			s.mu.Unlock()
			if again {
				continue
			}
			if ferr != nil && s.ctx.Err() == nil {
				s.say("Lost the event stream of task " + task + ": " + refusal(ferr))
				s.stop("end_turn")
			}
			return
		}
	}()
}

// take handles one live event: shown to the editor, an approval request
// asked of it, a decision withdrawing the question, and the prompt's end.
func (s *rsession) take(ev apitype.Event) {
	s.mu.Lock()
	if ev.Seq <= s.lastSeq {
		s.mu.Unlock()
		return
	}
	s.lastSeq = ev.Seq
	s.mu.Unlock()
	s.show(ev)
	switch ev.Type {
	case "question":
		if q := questionOf(ev); q != "" {
			s.mu.Lock()
			s.ownBlock = true
			s.mu.Unlock()
			s.askQuestion(ev.Seq, q)
		}
	case "message":
		if isUserMessage(ev) {
			s.withdrawQuestions() // answered elsewhere (chat, the dashboard, another editor)
		}
	case "approval_requested":
		if a, ok := approvalOf(ev.Payload); ok {
			s.ask(a)
		}
	case "approval_decided":
		var d struct {
			ID string `json:"approval_id"`
		}
		if json.Unmarshal(ev.Payload, &d) == nil {
			s.mu.Lock()
			if stop := s.asked[d.ID]; stop != nil {
				stop() // decided elsewhere: the editor's question is withdrawn
			}
			s.mu.Unlock()
		}
	}
	reason := stopReason(ev)
	s.mu.Lock()
	if ev.Type == apitype.EventTaskState && s.ownBlock {
		// The task blocked on the question just asked: the person's
		// choice decides whether the prompt ends. Any other state (a
		// question the goal went on past) ends it as usual.
		var st apitype.TaskStatePayload
		if reason != "" && json.Unmarshal(ev.Payload, &st) == nil && st.State == apitype.StateBlocked {
			reason = ""
		}
		s.ownBlock = false
	}
	w := s.waiting
	if w != nil && !w.armed && ev.Type == "message" {
		var m struct {
			Role string `json:"role"`
			Text string `json:"text"`
		}
		if json.Unmarshal(ev.Payload, &m) == nil && m.Role == "user" && m.Text == w.text {
			w.armed = true
		}
	}
	fire := w != nil && w.armed && reason != ""
	if fire {
		s.waiting = nil
	}
	s.mu.Unlock()
	if fire {
		w.done <- reason
	}
}

// stopReason is the stop reason a prompt ends with at ev: the task's
// terminal state; "" for any other event. (A goal's question is asked of
// the editor, and the person's choice ends the prompt or not.)
func stopReason(ev apitype.Event) string {
	if !ev.EndsTask() {
		return ""
	}
	var p apitype.TaskStatePayload
	_ = json.Unmarshal(ev.Payload, &p)
	switch p.State {
	case apitype.StateCancelled:
		return "cancelled"
	case apitype.StateBudgetExhausted:
		return "max_turn_requests"
	}
	return "end_turn"
}

// show sends ev's session/update notifications.
func (s *rsession) show(ev apitype.Event) {
	for _, u := range taskUpdates(s.cwd, ev) {
		s.r.a.notify(s.id, u)
	}
}
