package acp

import (
	"context"
	"errors"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/apitype"
	apiclient "reasonix/runner/client"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	rstore "reasonix/runner/store"
	"reasonix/runner/store/storetest"
	"reasonix/runner/workspace"
)

// adminToken is the test service's bootstrap (admin) token.
const adminToken = "acp-admin-secret"

// service is a real runner behind the real HTTP API on loopback.
type service struct {
	t   testing.TB
	st  *rstore.Store
	url string
	set *config.Config
}

// startService runs a service whose model is prov; with a repo, it has
// one workspace "app" of that repository.
func startService(t testing.TB, prov agent.Provider, repo string) *service {
	t.Helper()
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	o := runnertest.Options{Provider: prov, Settings: set}
	if repo != "" {
		set.Workspaces = []config.Workspace{{Name: "app", Repo: repo, Base: "main"}}
		wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		o.Configure = func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }
	}
	st := storetest.SQLite(t, rstore.Config{})
	o.Store = st
	svc := runnertest.Start(t, o)
	if _, err := st.RegisterBootstrapToken(context.Background(), rstore.BootstrapName, adminToken); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: svc, Logger: storetest.Quiet(), KeepAlive: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &service{t: t, st: st, url: srv.URL, set: set}
}

// api is a client of the service with secret (the admin's when empty).
func (s *service) api(secret string) *apiclient.Client {
	s.t.Helper()
	if secret == "" {
		secret = adminToken
	}
	c, err := apiclient.New(s.url, secret)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

func (s *service) token(name string, role rstore.Role) string {
	s.t.Helper()
	_, secret, err := s.st.CreateToken(context.Background(), rstore.NewToken{Name: name, Role: role})
	if err != nil {
		s.t.Fatal(err)
	}
	return secret
}

// editor is an ACP client of `reasonix acp --server` acting with secret.
// Its own configuration names no workspace, as on a laptop: it learns the
// service's from GET /api/v1/workspaces.
func (s *service) editor(secret string) *client {
	s.t.Helper()
	c := newClientWith(s.t, Config{Settings: config.Default(), Server: s.api(secret), Dir: filepath.Join(s.t.TempDir(), "sessions")})
	c.initialize()
	return c
}

func waitTask(t *testing.T, c *apiclient.Client, id string, states ...apitype.TaskState) apitype.Task {
	t.Helper()
	var task apitype.Task
	eventually.NoError(t, 20*time.Second, func() error {
		var err error
		if task, err = c.Task(t.Context(), id); err != nil {
			return err
		}
		if !slices.Contains(states, task.State) {
			return errors.New("task is " + string(task.State))
		}
		return nil
	})
	return task
}

// askingTurns: the model says what it will do and asks for a shell call
// that needs a person, then finishes.
func askingTurns() []agenttest.Turn {
	return []agenttest.Turn{
		{Text: "I will write f.", ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > f"}`}}},
		{Text: "done"},
	}
}

// parked submits a task as alice (a submit token) and waits until it asks
// for an approval.
func parked(t *testing.T, s *service) string {
	t.Helper()
	alice := s.api(s.token("alice", rstore.RoleSubmit))
	sub, err := alice.Submit(t.Context(), apitype.SubmitRequest{Prompt: "write f\nplease"})
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, s.api(""), sub.ID, apitype.StateWaitingApproval)
	return sub.ID
}

func (c *client) hasUpdate(session, kind, text string) bool {
	return strings.Contains(c.text(session, kind), text)
}

// TestServerListLoadFollowAndAllow: a task started through the API is
// listed as a session; session/load replays its log before answering,
// asks its pending approval as session/request_permission, and an allow
// from the editor is decided on the service as the token's principal,
// bound to the call's hash; the task then runs the call, and its live
// events stream until it ends.
func TestServerListLoadFollowAndAllow(t *testing.T) {
	s := startService(t, agenttest.NewScriptedProvider(askingTurns()...), "")
	id := parked(t, s)
	ed := s.editor("")

	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
			Title     string `json:"title"`
		} `json:"sessions"`
	}
	ed.call("session/list", map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != id || list.Sessions[0].Title != "write f" ||
		!filepath.IsAbs(list.Sessions[0].Cwd) {
		t.Fatalf("session/list = %+v, want the task %s", list.Sessions, id)
	}

	ed.call("session/load", map[string]any{"sessionId": id, "cwd": t.TempDir(), "mcpServers": []any{}}, nil)
	// Replayed before the answer: the agent's words and the states so far.
	if !ed.hasUpdate(id, "agent_message_chunk", "I will write f.") || !ed.hasUpdate(id, "agent_thought_chunk", "Task waiting approval") {
		t.Fatalf("the replay lacks the log: %v", kinds(ed.seen(id)))
	}
	if code := ed.errCode("session/load", map[string]any{"sessionId": id, "mcpServers": []any{}}); code != -32600 {
		t.Errorf("loading an open task: %d, want -32600", code)
	}
	if code := ed.errCode("session/load", map[string]any{"sessionId": "t_nope", "mcpServers": []any{}}); code != -32602 {
		t.Errorf("loading an unknown task: %d, want -32602", code)
	}

	p := <-ed.perms
	if string(p.Params.SessionId) != id || p.Params.ToolCall.Title == nil || !strings.Contains(*p.Params.ToolCall.Title, "echo hi > f") {
		t.Fatalf("permission request %+v", p.Params)
	}
	var opts []string
	for _, o := range p.Params.Options {
		opts = append(opts, string(o.OptionId))
	}
	if !slices.Contains(opts, "allow_once") || !slices.Contains(opts, "reject") {
		t.Errorf("options %v", opts)
	}
	p.Reply <- "allow_once"

	admin := s.api("")
	waitTask(t, admin, id, apitype.StateSucceeded)
	list2, err := admin.Approvals(t.Context(), apiclient.ApprovalFilter{TaskID: id})
	if err != nil || len(list2) != 1 || list2[0].State != apitype.ApprovalAllowed || list2[0].Decision != apitype.AllowOnce ||
		list2[0].DecidedBy != "token:admin" {
		t.Fatalf("the approval on the service: %+v, %v", list2, err)
	}
	// The live part: the call ran and the task's end reached the editor.
	waitFor(t, func() bool { return ed.hasUpdate(id, "agent_thought_chunk", "Task succeeded") })
	if !ed.hasUpdate(id, "agent_message_chunk", "done") {
		t.Errorf("the final answer was not followed: %q", ed.text(id, "agent_message_chunk"))
	}
	ran := false
	for _, u := range ed.seen(id) {
		ran = ran || (u.Kind == "tool_call" && strings.Contains(string(u.Raw), `"c1"`) && strings.Contains(string(u.Raw), "in_progress"))
	}
	if !ran {
		t.Errorf("no tool_call of c1 in progress was followed: %v", kinds(ed.seen(id)))
	}
}

// TestServerRejectIsADenyOnTheService: reject in the editor denies the
// approval on the service; the call does not run.
func TestServerRejectIsADenyOnTheService(t *testing.T) {
	s := startService(t, agenttest.NewScriptedProvider(askingTurns()...), "")
	id := parked(t, s)
	ed := s.editor("")
	ed.call("session/resume", map[string]any{"sessionId": id, "mcpServers": []any{}}, nil)
	if n := len(ed.seen(id)); n != 0 {
		t.Errorf("session/resume replayed %d updates", n)
	}
	p := <-ed.perms
	p.Reply <- "reject"
	admin := s.api("")
	waitTask(t, admin, id, apitype.StateSucceeded, apitype.StateBlocked, apitype.StateFailed)
	list, err := admin.Approvals(t.Context(), apiclient.ApprovalFilter{TaskID: id})
	if err != nil || len(list) != 1 || list[0].State != apitype.ApprovalDenied || list[0].DecidedBy != "token:admin" {
		t.Fatalf("the approval on the service: %+v, %v", list, err)
	}
	evs, err := admin.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == "tool_started" {
			t.Fatalf("the rejected call ran: %s", e.Payload)
		}
	}
}

// TestServerRefusedDecisionIsShownAndCancelCancels: the service's rules
// hold whatever the editor says — alice may not approve her own task's
// call; the refusal is shown in the session and the approval stays
// pending. session/cancel then cancels the task through the API.
func TestServerRefusedDecisionIsShownAndCancelCancels(t *testing.T) {
	s := startService(t, agenttest.NewScriptedProvider(askingTurns()...), "")
	secret := s.token("alice", rstore.RoleApprove)
	alice := s.api(secret)
	sub, err := alice.Submit(t.Context(), apitype.SubmitRequest{Prompt: "write f"})
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, alice, sub.ID, apitype.StateWaitingApproval)
	ed := s.editor(secret)
	ed.call("session/load", map[string]any{"sessionId": sub.ID, "mcpServers": []any{}}, nil)
	p := <-ed.perms
	p.Reply <- "allow_once"
	waitFor(t, func() bool {
		return ed.hasUpdate(sub.ID, "agent_message_chunk", "you asked for this task; another approver must decide")
	})
	list, err := alice.Approvals(t.Context(), apiclient.ApprovalFilter{TaskID: sub.ID})
	if err != nil || len(list) != 1 || list[0].State != apitype.ApprovalPending {
		t.Fatalf("after a refused decision: %+v, %v", list, err)
	}
	ed.call("session/cancel", map[string]any{"sessionId": sub.ID}, nil)
	waitTask(t, alice, sub.ID, apitype.StateCancelled)
}

// gitRepo is a repository with one commit on main.
func gitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "--allow-empty", "-m", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// TestServerNewSubmitsAndPromptMessages: session/new in a checkout of a
// workspace binds the session to it; the first prompt submits the task
// there and answers when it ends; the next prompt is a message that
// continues it. A cwd no workspace holds is a clear -32602, unless
// _meta names the workspace.
func TestServerNewSubmitsAndPromptMessages(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := gitRepo(t)
	prov := agenttest.NewScriptedProvider(agenttest.Turn{Text: "built"}, agenttest.Turn{Text: "tested"})
	s := startService(t, prov, repo)
	ed := s.editor("")

	elsewhere := t.TempDir()
	err := ed.try("session/new", map[string]any{"cwd": elsewhere, "mcpServers": []any{}}, nil)
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "no workspace") || !strings.Contains(err.Message, "app") {
		t.Fatalf("session/new outside every workspace: %+v", err)
	}
	var named struct {
		SessionID string `json:"sessionId"`
	}
	ed.call("session/new", map[string]any{"cwd": elsewhere, "mcpServers": []any{},
		"_meta": map[string]any{"reasonix.io": map[string]any{"workspace": "app"}}}, &named)
	if named.SessionID == "" {
		t.Fatal("session/new with a named workspace gave no session")
	}

	id := ed.newSession(repo)
	if code := ed.errCode(SteerMethod, textPrompt(id, "x")); code != -32600 {
		t.Errorf("steer before any prompt: %d, want -32600", code)
	}
	if code := ed.errCode("session/set_config_option", map[string]string{"sessionId": id, "configId": "effort", "value": "high"}); code != -32600 {
		t.Errorf("a control of a service session: %d, want -32600", code)
	}
	if got := ed.prompt(id, "build it"); got != "end_turn" {
		t.Fatalf("first prompt: %s", got)
	}
	admin := s.api("")
	page, err2 := admin.Tasks(t.Context(), apiclient.TaskFilter{})
	if err2 != nil || len(page.Tasks) != 1 {
		t.Fatalf("tasks on the service: %+v, %v", page, err2)
	}
	task := page.Tasks[0]
	if task.Workspace != "app" || task.Prompt != "build it" || task.Requester != "token:admin" || task.State != apitype.StateSucceeded {
		t.Fatalf("the submitted task: %+v", task)
	}
	if !ed.hasUpdate(id, "agent_message_chunk", "built") {
		t.Errorf("the task's answer did not stream: %q", ed.text(id, "agent_message_chunk"))
	}

	if got := ed.prompt(id, "now test it"); got != "end_turn" {
		t.Fatalf("second prompt: %s", got)
	}
	if !ed.hasUpdate(id, "agent_message_chunk", "tested") {
		t.Errorf("the continuation did not stream: %q", ed.text(id, "agent_message_chunk"))
	}
	evs, err2 := admin.Events(t.Context(), task.ID, 0, 0)
	if err2 != nil {
		t.Fatal(err2)
	}
	messaged := false
	for _, e := range evs {
		messaged = messaged || (e.Type == "message" && strings.Contains(string(e.Payload), "now test it"))
	}
	if !messaged {
		t.Error("the second prompt did not reach the task as a message")
	}

	// Listed by the checkout's cwd, under the open session's id; nothing
	// for a directory no workspace holds.
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	}
	ed.call("session/list", map[string]any{"cwd": repo}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != id {
		t.Errorf("session/list by cwd = %+v, want %s", list.Sessions, id)
	}
	ed.call("session/list", map[string]any{"cwd": elsewhere}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("session/list of an unrelated cwd = %+v", list.Sessions)
	}
}

// BenchmarkServerFirstSession measures `reasonix acp --server`'s
// initialize → first session/new answered (budget 50 ms), over pipes to
// a real service's API on loopback: the workspace is found from the cwd
// and one API round trip checks the token.
func BenchmarkServerFirstSession(b *testing.B) {
	repo := gitRepo(b)
	s := startService(b, agenttest.NewScriptedProvider(), repo)
	var ms []float64
	for b.Loop() {
		ed := newClientWith(b, Config{Settings: s.set, Server: s.api(""), Dir: filepath.Join(b.TempDir(), "sessions")})
		start := time.Now()
		ed.initialize()
		ed.newSession(repo)
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(ms)
	b.ReportMetric(ms[len(ms)/2], "ms-init-to-session")
}

// TestServerPromptSteersALiveTask: a prompt to a task that is still live
// is a message that steers it: it reaches the model's next request, and
// the prompt answers when the task ends.
func TestServerPromptSteersALiveTask(t *testing.T) {
	prov := agenttest.NewScriptedProvider(askingTurns()...)
	s := startService(t, prov, "")
	id := parked(t, s)
	ed := s.editor("")
	ed.call("session/load", map[string]any{"sessionId": id, "mcpServers": []any{}}, nil)
	p := <-ed.perms
	stop := ed.promptAsync(id, "use printf instead")
	waitFor(t, func() bool { return ed.hasUpdate(id, "user_message_chunk", "use printf instead") })
	select {
	case got := <-stop:
		t.Fatalf("the prompt ended before the task: %s", got)
	default:
	}
	p.Reply <- "allow_once"
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %s", got)
	}
	if task := waitTask(t, s.api(""), id, apitype.StateSucceeded); task.State != apitype.StateSucceeded {
		t.Fatal(task.State)
	}
	reqs := prov.Requests()
	last := reqs[len(reqs)-1].Messages
	steered := false
	for _, m := range last {
		steered = steered || (m.Role == agent.RoleUser && strings.Contains(m.Content, "use printf instead"))
	}
	if !steered {
		t.Errorf("the model's last request lacks the steer: %+v", last)
	}
}
