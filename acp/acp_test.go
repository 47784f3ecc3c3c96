package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestInitializeAdvertisesTheCapabilities(t *testing.T) {
	c := newClient(t)
	res := c.initialize()
	b, _ := json.Marshal(res)
	var got struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession         bool                       `json:"loadSession"`
			SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
			PromptCapabilities  map[string]bool            `json:"promptCapabilities"`
			MCPCapabilities     map[string]bool            `json:"mcpCapabilities"`
			Meta                map[string]struct {
				SessionSteer struct {
					Method string `json:"method"`
				} `json:"sessionSteer"`
			} `json:"_meta"`
		} `json:"agentCapabilities"`
		AuthMethods []struct {
			ID   string   `json:"id"`
			Type string   `json:"type"`
			Args []string `json:"args"`
		} `json:"authMethods"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	caps := got.AgentCapabilities
	if got.ProtocolVersion != 1 || !caps.LoadSession {
		t.Errorf("protocolVersion %d, loadSession %v; want 1, true", got.ProtocolVersion, caps.LoadSession)
	}
	for _, k := range []string{"list", "resume", "close", "delete"} {
		if _, ok := caps.SessionCapabilities[k]; !ok {
			t.Errorf("sessionCapabilities lacks %s: %s", k, b)
		}
	}
	if !caps.PromptCapabilities["embeddedContext"] || caps.PromptCapabilities["image"] || caps.PromptCapabilities["audio"] {
		t.Errorf("promptCapabilities = %v", caps.PromptCapabilities)
	}
	if !caps.MCPCapabilities["http"] {
		t.Errorf("mcpCapabilities = %v", caps.MCPCapabilities)
	}
	if m := caps.Meta["reasonix.io"].SessionSteer.Method; m != SteerMethod {
		t.Errorf(`_meta["reasonix.io"].sessionSteer.method = %q`, m)
	}
	if len(got.AuthMethods) != 1 || got.AuthMethods[0].Type != "terminal" || !slices.Equal(got.AuthMethods[0].Args, []string{"init"}) {
		t.Errorf("authMethods = %+v, want one terminal method running init", got.AuthMethods)
	}
}

func TestPromptStreamsMessagesToolCallsAndPlan(t *testing.T) {
	todo := `{"todos":[{"content":"read the file","status":"in_progress"},{"content":"answer","status":"pending"}]}`
	c := newClient(t,
		agenttest.Turn{Text: "Let me look.", ToolCalls: []agent.ToolCall{
			{ID: "c1", Name: "todo_write", Arguments: todo},
			{ID: "c2", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
		}},
		agenttest.Turn{Text: "The notes say hello."},
	)
	c.initialize()
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := c.newSession(cwd)
	if got := c.prompt(id, "what do the notes say?"); got != "end_turn" {
		t.Fatalf("stop reason %q, want end_turn", got)
	}
	if got := c.text(id, "agent_message_chunk"); got != "Let me look.The notes say hello." {
		t.Errorf("streamed text %q", got)
	}
	ks := kinds(c.seen(id))
	for _, want := range []string{"tool_call", "tool_call_update", "plan"} {
		if !slices.Contains(ks, want) {
			t.Errorf("updates %v lack %s", ks, want)
		}
	}
	var read map[string]any
	for _, u := range c.seen(id) {
		var m map[string]any
		json.Unmarshal(u.Raw, &m)
		if u.Kind == "tool_call" && m["toolCallId"] == "c2" {
			read = m
		}
	}
	if read == nil || read["kind"] != "read" || !strings.Contains(read["title"].(string), "notes.txt") {
		t.Fatalf("read_file's tool_call = %v", read)
	}
	locs, _ := read["locations"].([]any)
	if len(locs) != 1 || locs[0].(map[string]any)["path"] != filepath.Join(cwd, "notes.txt") {
		t.Errorf("locations = %v, want the absolute path", read["locations"])
	}
	// The result reached the model, and the editor saw it completed.
	reqs := c.prov.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content, "hello") {
		t.Errorf("the model did not get the file's content: %+v", reqs)
	}
	if !strings.Contains(c.updateJSON(id, "tool_call_update", "c2"), `"completed"`) {
		t.Errorf("read_file never completed: %s", c.updateJSON(id, "tool_call_update", "c2"))
	}
}

// updateJSON joins the updates of one kind about one tool call.
func (c *client) updateJSON(session, kind, callID string) string {
	var b strings.Builder
	for _, u := range c.seen(session) {
		if u.Kind == kind && strings.Contains(string(u.Raw), `"toolCallId":"`+callID+`"`) {
			b.Write(u.Raw)
		}
	}
	return b.String()
}

func writeTurn(id, path string) agenttest.Turn {
	args, _ := json.Marshal(map[string]string{"path": path, "content": "written\n"})
	return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: id, Name: "write_file", Arguments: string(args)}}}
}

func TestPermissionAllowedRunsTheCallAndRecordsTheEditor(t *testing.T) {
	c := newClient(t, writeTurn("w1", "out.txt"), agenttest.Turn{Text: "done"})
	c.initialize()
	cwd := t.TempDir()
	id := c.newSession(cwd)
	stop := c.promptAsync(id, "write the file")
	p := <-c.perms
	if p.Params.ToolCall.ToolCallId != "w1" || string(p.Params.SessionId) != id {
		t.Fatalf("permission request for %q in %q", p.Params.ToolCall.ToolCallId, p.Params.SessionId)
	}
	var opts []string
	for _, o := range p.Params.Options {
		opts = append(opts, string(o.Kind))
	}
	if !slices.Equal(opts, []string{"allow_once", "allow_always", "reject_once"}) {
		t.Errorf("options %v", opts)
	}
	p.Reply <- optAllowOnce
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "out.txt")); err != nil || string(b) != "written\n" {
		t.Fatalf("the approved write did not happen: %q, %v", b, err)
	}
	tr, err := os.ReadFile(filepath.Join(c.dir, "sessions", id, transcriptFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tr), `"decided_by":"acp:testeditor"`) || !strings.Contains(string(tr), `"choice":"allow_once"`) {
		t.Errorf("the transcript does not record the editor's user as the approver:\n%s", tr)
	}
}

func TestPermissionRejectedDoesNotRunTheCall(t *testing.T) {
	c := newClient(t, writeTurn("w1", "out.txt"), agenttest.Turn{Text: "ok, I will not"})
	c.initialize()
	cwd := t.TempDir()
	id := c.newSession(cwd)
	stop := c.promptAsync(id, "write the file")
	(<-c.perms).Reply <- optReject
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if _, err := os.Stat(filepath.Join(cwd, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("a rejected write ran: %v", err)
	}
	if !strings.Contains(c.updateJSON(id, "tool_call_update", "w1"), `"failed"`) {
		t.Errorf("the rejected call is not shown failed: %s", c.updateJSON(id, "tool_call_update", "w1"))
	}
	reqs := c.prov.Requests()
	if last := reqs[len(reqs)-1].Messages; !strings.Contains(last[len(last)-1].Content, "declined") {
		t.Errorf("the model was not told a person declined: %+v", last[len(last)-1])
	}
}

func TestAllowAlwaysCoversTheSessionOnly(t *testing.T) {
	c := newClient(t,
		writeTurn("w1", "a.txt"), writeTurn("w2", "a.txt"), agenttest.Turn{Text: "done"},
		writeTurn("w3", "a.txt"), agenttest.Turn{Text: "done"},
	)
	c.initialize()
	cwd := t.TempDir()
	first := c.newSession(cwd)
	stop := c.promptAsync(first, "write twice")
	(<-c.perms).Reply <- optAllowAlways
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	// The second write of the same file was not asked about; another
	// session is asked again.
	second := c.newSession(cwd)
	stop = c.promptAsync(second, "write once")
	p := <-c.perms
	if p.Params.ToolCall.ToolCallId != "w3" {
		t.Fatalf("asked about %s, want w3 (w2 was covered by allow always)", p.Params.ToolCall.ToolCallId)
	}
	p.Reply <- optAllowOnce
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
}

func TestCancelMidTurn(t *testing.T) {
	c := newClient(t, agenttest.Turn{Text: "thinking", Stall: true})
	c.initialize()
	id := c.newSession(t.TempDir())
	stop := c.promptAsync(id, "take your time")
	waitFor(t, func() bool { return c.text(id, "agent_message_chunk") == "thinking" })
	if err := c.conn.SendNotification(t.Context(), "session/cancel", map[string]string{"sessionId": id}); err != nil {
		t.Fatal(err)
	}
	if got := <-stop; got != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled", got)
	}
}

func TestCancelWhileAskingForPermission(t *testing.T) {
	c := newClient(t, writeTurn("w1", "out.txt"))
	c.initialize()
	cwd := t.TempDir()
	id := c.newSession(cwd)
	stop := c.promptAsync(id, "write")
	p := <-c.perms
	if err := c.conn.SendNotification(t.Context(), "session/cancel", map[string]string{"sessionId": id}); err != nil {
		t.Fatal(err)
	}
	if got := <-stop; got != "cancelled" {
		t.Fatalf("stop reason %q, want cancelled", got)
	}
	p.Reply <- "" // the client answers the abandoned request as cancelled
	if _, err := os.Stat(filepath.Join(cwd, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("a cancelled turn's write ran: %v", err)
	}
}

func TestSteerReachesTheNextModelCall(t *testing.T) {
	c := newClient(t, writeTurn("w1", "out.txt"), agenttest.Turn{Text: "done"})
	c.initialize()
	id := c.newSession(t.TempDir())
	steer := func(session, text string) map[string]any {
		return map[string]any{"sessionId": session, "prompt": []any{map[string]string{"type": "text", "text": text}}}
	}
	if code := c.errCode(SteerMethod, steer(id, "too early")); code != -32600 {
		t.Errorf("steer without a prompt: %d, want -32600", code)
	}
	stop := c.promptAsync(id, "write the file")
	p := <-c.perms // the turn is active and waiting here
	var res map[string]any
	c.call(SteerMethod, steer(id, "use email instead of username"), &res)
	if len(res) != 0 {
		t.Errorf("steer result %v, want {}", res)
	}
	if code := c.errCode(SteerMethod, steer("s_00000000000000000000", "x")); code != -32602 {
		t.Errorf("steer of an unknown session: %d, want -32602", code)
	}
	if code := c.errCode(SteerMethod, steer(id, "  ")); code != -32602 {
		t.Errorf("empty steer: %d, want -32602", code)
	}
	if code := c.errCode("session/steer", steer(id, "x")); code != -32601 {
		t.Errorf("session/steer: %d, want -32601", code)
	}
	p.Reply <- optAllowOnce
	if got := <-stop; got != "end_turn" {
		t.Fatalf("stop reason %q: the steer must not cancel the turn", got)
	}
	reqs := c.prov.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (a steer spends no step)", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != agent.RoleUser || last.Content != "use email instead of username" {
		t.Errorf("the next model request ends with %+v, want the steer as a user message", last)
	}
	if reqs[0].Messages[0].Content != reqs[1].Messages[0].Content || !reflect.DeepEqual(reqs[0].Tools, reqs[1].Tools) {
		t.Error("the steer changed the stable prefix")
	}
}

func TestTwoSessionsAreIsolated(t *testing.T) {
	echo := agenttest.Turn{Handler: func(r agenttest.Request) agenttest.Turn {
		var users []string
		for _, m := range r.Messages {
			if m.Role == agent.RoleUser {
				users = append(users, m.Content)
			}
		}
		return agenttest.Turn{Text: "heard: " + strings.Join(users, " | ")}
	}}
	c := newClient(t, echo, echo, echo)
	c.initialize()
	a, b := c.newSession(t.TempDir()), c.newSession(t.TempDir())
	stopA, stopB := c.promptAsync(a, "alpha"), c.promptAsync(b, "beta")
	if ra, rb := <-stopA, <-stopB; ra != "end_turn" || rb != "end_turn" {
		t.Fatalf("stop reasons %q, %q", ra, rb)
	}
	if got := c.prompt(a, "again"); got != "end_turn" {
		t.Fatal(got)
	}
	if got := c.text(a, "agent_message_chunk"); got != "heard: alphaheard: alpha | again" {
		t.Errorf("session a saw %q", got)
	}
	if got := c.text(b, "agent_message_chunk"); got != "heard: beta" {
		t.Errorf("session b saw %q", got)
	}
}

func TestLoadReplaysAndResumeDoesNot(t *testing.T) {
	c := newClient(t, agenttest.Turn{Text: "hi there"}, agenttest.Turn{Text: "still here"})
	c.initialize()
	cwd := t.TempDir()
	id := c.newSession(cwd)
	if got := c.prompt(id, "hello"); got != "end_turn" {
		t.Fatal(got)
	}
	c.call("session/close", map[string]string{"sessionId": id}, nil)
	if code := c.errCode("session/prompt", textPrompt(id, "x")); code != -32602 {
		t.Errorf("prompt after close: %d, want -32602", code)
	}
	before := len(c.seen(id))
	c.call("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}, nil)
	replayed := c.seen(id)[before:]
	if got := kinds(replayed); !slices.Equal(got, []string{"user_message_chunk", "agent_message_chunk", "available_commands_update"}) {
		t.Fatalf("replay %v", got)
	}
	if !strings.Contains(string(replayed[0].Raw), "hello") || !strings.Contains(string(replayed[1].Raw), "hi there") {
		t.Errorf("replay %s %s", replayed[0].Raw, replayed[1].Raw)
	}
	c.call("session/close", map[string]string{"sessionId": id}, nil)
	before = len(c.seen(id))
	c.call("session/resume", map[string]any{"sessionId": id, "cwd": cwd}, nil)
	if got := kinds(c.seen(id)[before:]); !slices.Equal(got, []string{"available_commands_update"}) {
		t.Errorf("resume sent %v, want only the commands (no replay)", got)
	}
	if got := c.prompt(id, "still there?"); got != "end_turn" {
		t.Fatal(got)
	}
	msgs := c.prov.Requests()[1].Messages
	if len(msgs) < 4 || msgs[1].Content != "hello" || msgs[2].Content != "hi there" {
		t.Errorf("the resumed session lost its history: %+v", msgs)
	}
}

func TestListFiltersByCwdAndDeleteRemoves(t *testing.T) {
	c := newClient(t, agenttest.Turn{Text: "ok"})
	c.initialize()
	one, two := t.TempDir(), t.TempDir()
	a := c.newSession(one)
	c.newSession(two)
	if got := c.prompt(a, "name this session\nsecond line"); got != "end_turn" {
		t.Fatal(got)
	}
	type listed struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
			Title     string `json:"title"`
		} `json:"sessions"`
	}
	var all, filtered listed
	c.call("session/list", map[string]any{}, &all)
	c.call("session/list", map[string]any{"cwd": one}, &filtered)
	if len(all.Sessions) != 2 || len(filtered.Sessions) != 1 || filtered.Sessions[0].SessionID != a {
		t.Fatalf("list all %+v, filtered %+v", all, filtered)
	}
	if filtered.Sessions[0].Title != "name this session" {
		t.Errorf("title %q", filtered.Sessions[0].Title)
	}
	c.call("session/delete", map[string]string{"sessionId": a}, nil)
	c.call("session/list", map[string]any{"cwd": one}, &filtered)
	if len(filtered.Sessions) != 0 {
		t.Errorf("a deleted session is still listed: %+v", filtered)
	}
	if code := c.errCode("session/load", map[string]any{"sessionId": a, "cwd": one, "mcpServers": []any{}}); code != -32602 {
		t.Errorf("load of a deleted session: %d, want -32602", code)
	}
	if code := c.errCode("session/delete", map[string]string{"sessionId": "../../etc"}); code != -32002 {
		t.Errorf("delete of a path: %d, want -32002 (not found)", code)
	}
	if code := c.errCode("session/close", map[string]string{"sessionId": a}); code != -32002 {
		t.Errorf("close of a deleted session: %d, want -32002 (not found)", code)
	}
}

func TestNewSessionRefusesARelativeCwd(t *testing.T) {
	c := newClient(t)
	c.initialize()
	if code := c.errCode("session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}}); code != -32602 {
		t.Errorf("relative cwd: %d, want -32602", code)
	}
	if code := c.errCode("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{map[string]any{"name": "x", "type": "ftp"}}}); code != -32602 {
		t.Errorf("unknown MCP transport: %d, want -32602", code)
	}
}

func TestModesAndConfigOptions(t *testing.T) {
	c := newClient(t, writeTurn("w1", "out.txt"), agenttest.Turn{Text: "here is my plan"},
		writeTurn("w2", "out.txt"), agenttest.Turn{Text: "done"})
	c.initialize()
	cwd := t.TempDir()
	var st struct {
		SessionID string `json:"sessionId"`
		Modes     struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue string `json:"currentValue"`
		} `json:"configOptions"`
	}
	c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &st)
	if st.Modes.CurrentModeID != "normal" || len(st.Modes.AvailableModes) != 3 {
		t.Errorf("modes %+v", st.Modes)
	}
	values := map[string]string{}
	for _, o := range st.ConfigOptions {
		values[o.ID] = o.CurrentValue
	}
	if values["tool_approval"] != "ask" || values["work_mode"] != "balanced" || values["model"] == "" {
		t.Errorf("config options %v", values)
	}
	id := st.SessionID

	// Plan mode: the write is refused without asking anyone.
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "plan"}, nil)
	if got := c.prompt(id, "plan the change"); got != "end_turn" {
		t.Fatal(got)
	}
	if _, err := os.Stat(filepath.Join(cwd, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("plan mode let a write run: %v", err)
	}
	if ks := kinds(c.seen(id)); !slices.Contains(ks, "current_mode_update") || !slices.Contains(ks, "config_option_update") {
		t.Errorf("after set_mode: %v, want current_mode_update and config_option_update", ks)
	}
	// The legacy "auto" is Normal + yolo: the write runs unasked, and the
	// conversation survived the rebuild.
	c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": "auto"}, nil)
	var res struct {
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue string `json:"currentValue"`
		} `json:"configOptions"`
	}
	c.call("session/set_config_option", map[string]string{"sessionId": id, "configId": "work_mode", "value": "delivery"}, &res)
	for _, o := range res.ConfigOptions {
		if (o.ID == "tool_approval" && o.CurrentValue != "yolo") || (o.ID == "work_mode" && o.CurrentValue != "delivery") {
			t.Errorf("after auto and delivery: %+v", res.ConfigOptions)
		}
	}
	if got := c.prompt(id, "now do it"); got != "end_turn" {
		t.Fatal(got)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "out.txt")); err != nil || string(b) != "written\n" {
		t.Fatalf("the write under yolo did not run: %q, %v", b, err)
	}
	if len(c.perms) != 0 {
		t.Error("yolo asked for permission")
	}
	reqs := c.prov.Requests()
	if msgs := reqs[2].Messages; len(msgs) < 5 || !strings.Contains(msgs[1].Content, "plan the change") {
		t.Errorf("the rebuild lost the conversation: %+v", msgs)
	}
	if code := c.errCode("session/set_config_option", map[string]string{"sessionId": id, "configId": "tool_approval", "value": "sometimes"}); code != -32602 {
		t.Errorf("a bad tool_approval: %d, want -32602", code)
	}
	if code := c.errCode("session/set_mode", map[string]string{"sessionId": id, "modeId": "chaos"}); code != -32602 {
		t.Errorf("an unknown mode: %d, want -32602", code)
	}
}

func TestCustomCommandsAreOfferedAndExpanded(t *testing.T) {
	c := newClient(t, agenttest.Turn{Text: "reviewed"})
	c.initialize()
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".reasonix", "commands")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	body := "---\ndescription: review a package\nargument-hint: PKG\n---\nReview the package $1 carefully.\n"
	if err := os.WriteFile(filepath.Join(dir, "review.md"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	id := c.newSession(cwd)
	if code := c.errCode("session/prompt", textPrompt(id, "/reveiw x")); code != -32602 {
		t.Errorf("an unknown command: %d, want -32602", code)
	}
	if got := c.prompt(id, "/review acp"); got != "end_turn" {
		t.Fatal(got)
	}
	var offered string
	for _, u := range c.seen(id) {
		if u.Kind == "available_commands_update" {
			offered = string(u.Raw)
		}
	}
	if !strings.Contains(offered, `"name":"review"`) || !strings.Contains(offered, `"hint":"PKG"`) {
		t.Errorf("available_commands_update = %s", offered)
	}
	reqs := c.prov.Requests()
	if len(reqs) != 1 || reqs[0].Messages[len(reqs[0].Messages)-1].Content != "Review the package acp carefully." {
		t.Errorf("the model got %+v, want the rendered command", reqs)
	}
}

// TestCheckoutSkillsReachTheSession: an editor session gets its checkout's
// skills as `reasonix run` does: listed in the system prompt, offered and
// expanded as commands.
func TestCheckoutSkillsReachTheSession(t *testing.T) {
	c := newClient(t, agenttest.Turn{Text: "released"})
	c.initialize()
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".reasonix", "skills", "release")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	body := "---\ndescription: cut a release\n---\nTag version $1 and write the notes.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	id := c.newSession(cwd)
	if got := c.prompt(id, "/release v1.2"); got != "end_turn" {
		t.Fatal(got)
	}
	var offered string
	for _, u := range c.seen(id) {
		if u.Kind == "available_commands_update" {
			offered = string(u.Raw)
		}
	}
	if !strings.Contains(offered, `"name":"release"`) {
		t.Errorf("available_commands_update = %s, want the skill offered", offered)
	}
	reqs := c.prov.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	if got := reqs[0].Messages[len(reqs[0].Messages)-1].Content; got != "Tag version v1.2 and write the notes." {
		t.Errorf("the model got %q, want the rendered skill", got)
	}
	if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "release") || !strings.Contains(sys, "cut a release") {
		t.Errorf("the system prompt does not list the skill:\n%s", sys)
	}
}

// TestToolApprovalChangesOnlyTheGate: tool_approval changes the gate's
// posture in place (issue 28 item 3). A background job started before the
// change still runs after it (the session was not rebuilt, which would
// have closed its jobs), a write asked about under ask runs unasked under
// yolo, and is asked about again after going back to ask.
func TestToolApprovalChangesOnlyTheGate(t *testing.T) {
	jobOutput := func(id string) agent.ToolCall {
		return agent.ToolCall{ID: id, Name: "job_output", Arguments: `{"job_id":"job-1"}`}
	}
	second, third := writeTurn("w2", "out.txt"), writeTurn("w3", "out2.txt")
	second.ToolCalls = append(second.ToolCalls, jobOutput("j2"))
	third.ToolCalls = append(third.ToolCalls, jobOutput("j3"))
	c := newClient(t,
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "b1", Name: "bash", Arguments: `{"command":"echo started; sleep 300","run_in_background":true}`}}},
		agenttest.Turn{Text: "started"},
		second, agenttest.Turn{Text: "written"},
		third, agenttest.Turn{Text: "asked"})
	c.initialize()
	cwd := t.TempDir()
	id := c.newSession(cwd)
	setApproval := func(v string) {
		t.Helper()
		c.call("session/set_config_option", map[string]string{"sessionId": id, "configId": "tool_approval", "value": v}, nil)
	}

	stop := c.promptAsync(id, "start the server")
	(<-c.perms).Reply <- optAllowOnce // bash under ask
	if got := <-stop; got != "end_turn" {
		t.Fatal(got)
	}

	setApproval("yolo")
	if got := c.prompt(id, "write it"); got != "end_turn" {
		t.Fatal(got)
	}
	if len(c.perms) != 0 {
		t.Error("yolo asked for permission")
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "out.txt")); err != nil || string(b) != "written\n" {
		t.Fatalf("the write under yolo did not run: %q, %v", b, err)
	}

	setApproval("ask")
	stop = c.promptAsync(id, "write another")
	p := <-c.perms
	if p.Params.ToolCall.ToolCallId != "w3" {
		t.Errorf("asked about %q, want w3", p.Params.ToolCall.ToolCallId)
	}
	// Only the gate changes, so the change is taken while a prompt runs;
	// the call already asking ends under ask.
	setApproval("auto")
	p.Reply <- optReject
	if got := <-stop; got != "end_turn" {
		t.Fatal(got)
	}
	if _, err := os.Stat(filepath.Join(cwd, "out2.txt")); !os.IsNotExist(err) {
		t.Errorf("the rejected write ran: %v", err)
	}

	// What job_output told the model after each change: the job from the
	// first turn, still running.
	results := map[string]string{}
	for _, r := range c.prov.Requests() {
		for _, m := range r.Messages {
			if m.ToolCallID != "" {
				results[m.ToolCallID] = m.Content
			}
		}
	}
	for _, call := range []string{"j2", "j3"} {
		if out := results[call]; !strings.Contains(out, "job-1") || !strings.Contains(out, "running for") {
			t.Errorf("job_output after a tool_approval change (%s): %q, want job-1 still running", call, out)
		}
	}
}

// TestSetModeChangesOnlyTheMode: a collaboration mode change is made in
// place, so a background job started before it is still running after
// normal → plan → normal (a rebuild would have stopped it), plan mode
// still refuses a writer, and a mode change during a prompt is refused.
func TestSetModeChangesOnlyTheMode(t *testing.T) {
	jobOutput := func(id string) agent.ToolCall {
		return agent.ToolCall{ID: id, Name: "job_output", Arguments: `{"job_id":"job-1"}`}
	}
	planned := writeTurn("w2", "out.txt")
	planned.ToolCalls = append(planned.ToolCalls, jobOutput("j2"))
	c := newClient(t,
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "b1", Name: "bash", Arguments: `{"command":"echo started; sleep 300","run_in_background":true}`}}},
		agenttest.Turn{Text: "started"},
		planned, agenttest.Turn{Text: "planned"},
		agenttest.Turn{ToolCalls: []agent.ToolCall{jobOutput("j3")}}, agenttest.Turn{Text: "checked"})
	c.initialize()
	cwd := t.TempDir()
	id := c.newSession(cwd)
	setMode := func(m string) {
		t.Helper()
		c.call("session/set_mode", map[string]string{"sessionId": id, "modeId": m}, nil)
	}

	stop := c.promptAsync(id, "start the server")
	p := <-c.perms // bash under ask
	if code := c.errCode("session/set_mode", map[string]string{"sessionId": id, "modeId": "plan"}); code != -32600 {
		t.Errorf("set_mode during a prompt: %d, want -32600", code)
	}
	p.Reply <- optAllowOnce
	if got := <-stop; got != "end_turn" {
		t.Fatal(got)
	}

	setMode("plan")
	if got := c.prompt(id, "plan it"); got != "end_turn" {
		t.Fatal(got)
	}
	if _, err := os.Stat(filepath.Join(cwd, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("plan mode let a write run: %v", err)
	}
	setMode("normal")
	if got := c.prompt(id, "check it"); got != "end_turn" {
		t.Fatal(got)
	}

	results := map[string]string{}
	for _, r := range c.prov.Requests() {
		for _, m := range r.Messages {
			if m.ToolCallID != "" {
				results[m.ToolCallID] = m.Content
			}
		}
	}
	if !strings.Contains(results["w2"], "plan mode") {
		t.Errorf("the write in plan mode: %q, want refused by plan mode", results["w2"])
	}
	for _, call := range []string{"j2", "j3"} {
		if out := results[call]; !strings.Contains(out, "job-1") || !strings.Contains(out, "running for") {
			t.Errorf("job_output after a mode change (%s): %q, want job-1 still running", call, out)
		}
	}
}
