package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
	"reasonix/internal/testenv"
)

// binary is the reasonix executable built once for the end-to-end tests;
// plugin is the example MCP server.
var binary, plugin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reasonix-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "reasonix")
	plugin = filepath.Join(dir, "reasonix-plugin-example")
	for out, pkg := range map[string]string{binary: ".", plugin: "../reasonix-plugin-example"} {
		build := exec.Command("go", "build", "-o", out, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, msg)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// e2e is one isolated installation: a home with a user config pointing at a
// fake model, and an empty workspace.
type e2e struct {
	t     testing.TB
	home  string
	work  string
	srv   *agenttest.Server
	extra []string // environment additions
}

func newE2E(t testing.TB, turns ...agenttest.Turn) *e2e {
	t.Helper()
	e := &e2e{t: t, home: t.TempDir(), work: t.TempDir(), srv: agenttest.NewServer(t, turns...)}
	e.configure("")
	return e
}

// configure writes a user config whose only provider is the fake model,
// followed by extra TOML.
func (e *e2e) configure(extra string) {
	e.writeUserConfig(fmt.Sprintf(`
default_model = "fake"

[[providers]]
name = "fake"
kind = "openai"
base_url = %q
model = "fake-model"
api_key_env = "FAKE_API_KEY"
max_retries = 2
%s`, e.srv.URL, extra))
}

func (e *e2e) writeUserConfig(body string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(body), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// run executes the binary in the workspace and returns stdout, stderr and the exit code.
func (e *e2e) run(args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = e.work
	cmd.Env = append(baseEnv(e.home), e.extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running reasonix: %v", err)
	}
	return stdout.String(), stderr.String(), code
}

func baseEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"REASONIX_HOME=" + home,
		"FAKE_API_KEY=sk-secret-test-key",
	}
}

func call(id, name, args string) agent.ToolCall {
	return agent.ToolCall{ID: id, Name: name, Arguments: args}
}

func toolTurn(calls ...agent.ToolCall) agenttest.Turn {
	return agenttest.Turn{ToolCalls: calls, Usage: agent.Usage{Prompt: 100, Completion: 10, Cached: 80}}
}

func answer(text string) agenttest.Turn {
	return agenttest.Turn{Text: text, Usage: agent.Usage{Prompt: 120, Completion: 20}}
}

func TestRunWritesFileAndRunsCommand(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("c1", "write_file", `{"path":"notes/hello.txt","content":"hello from the agent\n"}`)),
		toolTurn(call("c2", "bash", `{"command":"echo step-1 >> log.txt && cat notes/hello.txt"}`)),
		toolTurn(call("c3", "read_file", `{"path":"log.txt"}`), call("c4", "ls", `{"path":"."}`)),
		answer("All done: wrote notes/hello.txt and logged a step."),
	)
	stdout, stderr, code := e.run("run", "--auto", "write a note and log a step")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "All done") {
		t.Errorf("stdout = %q", stdout)
	}
	data, err := os.ReadFile(filepath.Join(e.work, "notes/hello.txt"))
	if err != nil || string(data) != "hello from the agent\n" {
		t.Errorf("hello.txt = %q, %v", data, err)
	}
	if log, _ := os.ReadFile(filepath.Join(e.work, "log.txt")); string(log) != "step-1\n" {
		t.Errorf("log.txt = %q", log)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model saw %d requests", len(reqs))
	}
	if reqs[0].Authorization != "Bearer sk-secret-test-key" {
		t.Errorf("authorization = %q", reqs[0].Authorization)
	}
	bashResult := reqs[2].Messages[len(reqs[2].Messages)-1]
	if bashResult.ToolCallID != "c2" || !strings.Contains(bashResult.Content, "hello from the agent") {
		t.Errorf("bash result fed back = %+v", bashResult)
	}
	if strings.Contains(stderr, "sk-secret-test-key") || strings.Contains(stdout, "sk-secret-test-key") {
		t.Error("the API key leaked into the output")
	}
	// The transcript was written as the run went.
	files, _ := filepath.Glob(filepath.Join(e.home, "transcripts", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts: %v", files)
	}
	f, _ := os.Open(files[0])
	defer f.Close()
	msgs, err := agent.ReadTranscript(f)
	if err != nil || len(msgs) != 1+3+4+1 {
		t.Errorf("transcript has %d messages (%v)", len(msgs), err)
	}
}

func TestRunJSONResult(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("c1", "bash", `{"command":"echo hi"}`)),
		answer("fine"),
	)
	stdout, stderr, code := e.run("run", "--json", "-y", "say", "hi")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res jsonResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	if res.Status != "succeeded" || res.Outcome != "completed" || res.FinalAnswer != "fine" || res.Steps != 2 ||
		res.ToolCalls != 1 || res.RefusedCalls != 0 || res.Tokens != (agent.Usage{Prompt: 220, Completion: 30, Cached: 80}) {
		t.Errorf("result = %+v", res)
	}
	if got := e.srv.Requests()[0].Messages; got[len(got)-1].Content != "say hi" {
		t.Errorf("task sent = %q", got[len(got)-1].Content)
	}
}

func TestRunRefusedWriteExitsBlocked(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("c1", "write_file", `{"path":"x.txt","content":"x"}`)),
		answer("I was not allowed to write x.txt."),
	)
	stdout, stderr, code := e.run("run", "--json", "create x.txt")
	if code != exitBlocked {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitBlocked, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.work, "x.txt")); err == nil {
		t.Error("a refused write happened")
	}
	if !strings.Contains(stderr, "blocked: write_file x.txt was refused (unattended); rerun with --auto") {
		t.Errorf("the summary does not say what was refused and what would allow it:\n%s", stderr)
	}
	var res jsonResult
	json.Unmarshal([]byte(stdout), &res)
	if res.Status != "blocked" || res.RefusedCalls != 1 {
		t.Errorf("result = %+v", res)
	}
	fed := e.srv.Requests()[1].Messages
	if msg := fed[len(fed)-1].Content; !strings.Contains(msg, "nobody could be asked") {
		t.Errorf("model was told %q", msg)
	}
}

func TestRunStepLimit(t *testing.T) {
	var turns []agenttest.Turn
	for i := range 5 {
		turns = append(turns, toolTurn(call(fmt.Sprint(i), "ls", `{}`)))
	}
	e := newE2E(t, turns...)
	_, stderr, code := e.run("run", "--max-steps", "3", "loop")
	if code != exitBudget {
		t.Fatalf("exit %d, want %d: %s", code, exitBudget, stderr)
	}
	if n := len(e.srv.Requests()); n != 3 {
		t.Errorf("requests = %d", n)
	}
}

func TestRunProviderFailures(t *testing.T) {
	cut := agenttest.CutToolCall("", call("c1", "write_file", `{"path":"a.txt","content":"aaaa"}`))
	tests := []struct {
		name     string
		turns    []agenttest.Turn
		code     int
		stderr   string
		requests int
	}{
		{"unauthorized", []agenttest.Turn{agenttest.Fail(401, "Incorrect API key provided: sk-secr***", 0)}, exitFailed, "rejected the API key", 1},
		{"malformed stream", []agenttest.Turn{agenttest.Raw("data: {not json\n\n"), agenttest.Raw("data: {not json\n\n"), agenttest.Raw("data: {not json\n\n")}, exitFailed, "stream", 3},
		{"cut mid tool call, then recovered", []agenttest.Turn{cut, answer("ok after retry")}, exitOK, "", 2},
		{"cut every time", []agenttest.Turn{cut, cut, cut}, exitFailed, "stream", 3},
		{"rate limited, then success", []agenttest.Turn{agenttest.Fail(429, "slow down", time.Second), answer("ok")}, exitOK, "retrying in", 2},
		{"server errors exhaust retries", []agenttest.Turn{agenttest.Fail(503, "busy", 0), agenttest.Fail(503, "busy", 0), agenttest.Fail(503, "busy", 0)}, exitFailed, "503", 3},
		{"only [DONE], asked once more", []agenttest.Turn{agenttest.Raw("data: [DONE]\n\n"), agenttest.Raw("data: [DONE]\n\n"), answer("never reached")}, exitFailed, "no text and no tool call", 2},
		{"answer past max_output_bytes", []agenttest.Turn{answer(strings.Repeat("x", 2<<20))}, exitFailed, "max_output_bytes", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, tc.turns...)
			start := time.Now()
			stdout, stderr, code := e.run("run", "do it")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q does not mention %q", stderr, tc.stderr)
			}
			if n := len(e.srv.Requests()); n != tc.requests {
				t.Errorf("requests = %d, want %d", n, tc.requests)
			}
			if tc.name == "rate limited, then success" && time.Since(start) < time.Second {
				t.Errorf("Retry-After was not respected: done after %v", time.Since(start))
			}
			if strings.Contains(stderr, "sk-secret-test-key") {
				t.Error("the API key leaked")
			}
		})
	}
}

func TestRunConfigErrors(t *testing.T) {
	tests := []struct {
		name, config string
		args         []string
		want         []string
	}{
		{"unknown provider kind", `
[[providers]]
name = "x"
kind = "gemini-native"
model = "m"
`, nil, []string{`"gemini-native"`, "openai"}},
		{"unknown key", `
[agent]
temprature = 0.2
`, nil, []string{"agent.temprature", "config.toml"}},
		{"no provider at all", ``, nil, []string{"no model is configured", "[[providers]]"}},
		{"missing key variable", `
[[providers]]
name = "x"
model = "m"
api_key_env = "NOT_SET_ANYWHERE"
`, nil, []string{"NOT_SET_ANYWHERE"}},
		{"unknown model", ``, []string{"--model", "nope"}, []string{`"nope"`}},
		{"bad flag", ``, []string{"--permission-mode", "sometimes"}, []string{"want ask, auto or yolo"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t)
			if tc.config != "" || tc.name == "no provider at all" {
				e.writeUserConfig(tc.config)
			}
			args := append(append([]string{"run"}, tc.args...), "task")
			_, stderr, code := e.run(args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not mention %q", stderr, w)
				}
			}
			if n := len(e.srv.Requests()); n != 0 {
				t.Errorf("a bad configuration still reached the model (%d requests)", n)
			}
		})
	}
}

func TestRunInterrupted(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("c1", "bash", `{"command":"sleep 30"}`)),
		answer("never"),
	)
	cmd := exec.Command(binary, "run", "-y", "wait")
	cmd.Dir = e.work
	cmd.Env = baseEnv(e.home)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// Interrupt once the sleep is running.
	eventually.True(t, 0, func() bool { return strings.Contains(stderr.String(), "sleep 30") },
		"the sleep never started")
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("exit = %v, want %d\n%s", err, exitInterrupted, stderr.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to stop", d)
	}
}

func TestVersionAndUsage(t *testing.T) {
	e := newE2E(t)
	if out, _, code := e.run("version"); code != 0 || !strings.HasPrefix(out, "reasonix ") {
		t.Errorf("version: %d %q", code, out)
	}
	if _, stderr, code := e.run("frobnicate"); code != exitUsage || !strings.Contains(stderr, "frobnicate") {
		t.Errorf("unknown command: %d %q", code, stderr)
	}
	if _, stderr, code := e.run("run"); code != exitUsage || !strings.Contains(stderr, "run needs TASK") {
		t.Errorf("run without task: %d %q", code, stderr)
	}
}

// lockedBuffer is a bytes.Buffer a test may read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRunCallsAnMCPPluginTool(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("c1", "mcp__example__wordcount", `{"text":"one two three\nfour"}`)),
		answer("The text has four words."),
	)
	e.configure(fmt.Sprintf(`
[[plugins]]
name = "example"
command = %q
`, plugin))
	stdout, stderr, code := e.run("run", "count the words")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	reqs := e.srv.Requests()
	var offered bool
	for _, tool := range reqs[0].Tools {
		offered = offered || tool.Name == "mcp__example__wordcount"
	}
	if !offered {
		t.Fatalf("the plugin's tool was not offered to the model: %+v", reqs[0].Tools)
	}
	result := reqs[1].Messages[len(reqs[1].Messages)-1]
	if result.ToolCallID != "c1" || !strings.Contains(result.Content, "words=4") {
		t.Errorf("wordcount result fed back = %+v", result)
	}
	out, _, code := e.run("mcp", "list")
	if code != exitOK || !strings.Contains(out, "example") || !strings.Contains(out, "ready") {
		t.Errorf("mcp list: exit %d\n%s", code, out)
	}
	out, _, code = e.run("mcp", "list", "--json")
	var servers []mcpServer
	if err := json.Unmarshal([]byte(out), &servers); code != exitOK || err != nil || len(servers) != 1 ||
		servers[0] != (mcpServer{Server: "example", Type: "stdio", State: "ready", Tools: servers[0].Tools}) || servers[0].Tools < 1 {
		t.Errorf("mcp list --json: exit %d, %v\n%s", code, err, out)
	}
}

func TestDoctorAndMigrate(t *testing.T) {
	e := newE2E(t)
	out, stderr, code := e.run("migrate")
	if code != exitOK || !strings.Contains(out, "sqlite store at schema version") {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "reasonix.db")); err != nil {
		t.Errorf("no database in the data dir: %v", err)
	}
	// The endpoint check asks for the model list with the key: 200 passes,
	// any 4xx (a wrong base_url, a rejected key) fails.
	models := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/v1/models":
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer sk-secret-test-key":
			w.WriteHeader(http.StatusUnauthorized)
		default:
			io.WriteString(w, `{"data":[{"id":"fake-model"}]}`)
		}
	}))
	defer models.Close()
	doctorWith := func(baseURL string) (string, int) {
		t.Helper()
		e.writeUserConfig(fmt.Sprintf("[[providers]]\nname = \"fake\"\nbase_url = %q\nmodel = \"fake-model\"\napi_key_env = \"FAKE_API_KEY\"\n", baseURL))
		out, _, code := e.run("doctor")
		return out, code
	}
	out, code = doctorWith(models.URL + "/v1")
	if code != exitOK || !strings.Contains(out, "ok    model        fake/fake-model") || !strings.Contains(out, "/v1/models answered HTTP 200") {
		t.Errorf("doctor on a good setup: exit %d\n%s", code, out)
	}
	out, code = doctorWith(models.URL + "/wrong")
	if code != exitFailed || !strings.Contains(out, "FAIL  endpoint") || !strings.Contains(out, "answered HTTP 404: check base_url") {
		t.Errorf("doctor with a base_url that answers 404: exit %d\n%s", code, out)
	}
	e.extra = []string{"FAKE_API_KEY=sk-wrong"}
	out, code = doctorWith(models.URL + "/v1")
	if code != exitFailed || !strings.Contains(out, "answered HTTP 401: the provider rejected the key in $FAKE_API_KEY") {
		t.Errorf("doctor with a rejected key: exit %d\n%s", code, out)
	}
	e.extra = []string{"FAKE_API_KEY="}
	out, code = doctorWith(models.URL + "/v1")
	if code != exitFailed || !strings.Contains(out, "FAIL  model") || !strings.Contains(out, "$FAKE_API_KEY is not set") {
		t.Errorf("doctor without the key: exit %d\n%s", code, out)
	}
}

func TestDenyRuleWinsEvenUnderYolo(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("c1", "bash", `{"command":"rm -f keep.txt"}`)),
		toolTurn(call("c2", "bash", `{"command":"echo ok > other.txt"}`)),
		answer("could not remove keep.txt"),
	)
	e.configure(`
[permissions]
deny = ["Bash(rm:*)"]
`)
	if err := os.WriteFile(filepath.Join(e.work, "keep.txt"), []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := e.run("run", "--json", "--permission-mode", "yolo", "clean up")
	if code != exitBlocked {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitBlocked, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.work, "keep.txt")); err != nil {
		t.Error("the denied rm ran")
	}
	if data, _ := os.ReadFile(filepath.Join(e.work, "other.txt")); string(data) != "ok\n" {
		t.Errorf("yolo did not allow the ordinary write: %q", data)
	}
	fed := e.srv.Requests()[1].Messages
	if msg := fed[len(fed)-1].Content; !strings.Contains(msg, "permission policy") || !strings.Contains(msg, "Bash(rm:*)") {
		t.Errorf("the model was told %q", msg)
	}
}

func TestSandboxedBashCannotWriteOutsideTheWorkspace(t *testing.T) {
	testenv.LookPath(t, testenv.Bwrap)
	outside := t.TempDir()
	e := newE2E(t,
		toolTurn(call("c1", "bash", fmt.Sprintf(`{"command":"echo in > inside.txt; echo out > %s/outside.txt"}`, outside))),
		answer("tried"),
	)
	e.configure(`
[sandbox]
bash = "enforce"
`)
	stdout, stderr, code := e.run("run", "--auto", "write two files")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(e.work, "inside.txt")); string(data) != "in\n" {
		t.Errorf("inside.txt = %q", data)
	}
	if _, err := os.Stat(filepath.Join(outside, "outside.txt")); err == nil {
		t.Error("sandboxed bash wrote outside the workspace")
	}
}

func TestConfigCheck(t *testing.T) {
	e := newE2E(t)
	out, stderr, code := e.run("config", "check")
	if code != exitOK || !strings.Contains(out, "model fake/fake-model") || !strings.Contains(out, "configuration ok") {
		t.Errorf("good config: exit %d\n%s%s", code, out, stderr)
	}
	e.writeUserConfig(`
[[providers]]
name = "x"
model = "m"

[permissions]
deny = ["Bash("]
`)
	_, stderr, code = e.run("config", "check")
	if code != exitUsage || !strings.Contains(stderr, `"Bash("`) {
		t.Errorf("bad rule: exit %d\n%s", code, stderr)
	}
}

func TestRunShowsThePlan(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("p", "todo_write", `{"todos":[{"content":"read the code","status":"completed"},{"content":"fix the bug","status":"in_progress"}]}`)),
		answer("planned"),
	)
	_, stderr, code := e.run("run", "plan it")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "plan:\n  [x] read the code\n  [>] fix the bug") {
		t.Errorf("the plan is not shown:\n%s", stderr)
	}
}
