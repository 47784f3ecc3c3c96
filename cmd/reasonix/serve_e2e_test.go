package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
)

// service is one `reasonix serve` process of an e2e installation.
type service struct {
	t      testing.TB
	cmd    *exec.Cmd
	url    string
	token  string
	stderr *lockedBuffer
	stdout *lockedBuffer // every line serve printed, the serving line first
	done   chan struct{}
}

var servingLine = regexp.MustCompile(`serving on (http://\S+)`)

// serve starts the binary with the installation's config and waits until it
// answers /readyz.
func (e *e2e) serve(t testing.TB, extraEnv ...string) *service {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = e.work
	cmd.Env = append(append(baseEnv(e.home), e.extra...), extraEnv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &service{t: t, cmd: cmd, stderr: &lockedBuffer{}, stdout: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.done
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			fmt.Fprintln(s.stdout, sc.Text())
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		m := servingLine.FindStringSubmatch(line)
		if !ok || m == nil {
			t.Fatalf("serve did not start: %q\n%s", line, s.stderr.String())
		}
		s.url = m[1]
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start in time\n%s", s.stderr.String())
	}
	tok, err := os.ReadFile(filepath.Join(e.home, tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	s.token = strings.TrimSpace(string(tok))
	s.waitFor(func() bool {
		resp, err := http.Get(s.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, "ready")
	return s
}

func (s *service) waitFor(cond func() bool, what string) {
	s.t.Helper()
	s.waitUpTo(30*time.Second, cond, what)
}

// waitUpTo is waitFor with its own bound, for a wait that does a lot of
// work on a loaded machine.
func (s *service) waitUpTo(bound time.Duration, cond func() bool, what string) {
	s.t.Helper()
	eventually.NoError(s.t, bound, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("timed out waiting for %s\nservice log:\n%s", what, s.stderr.String())
	})
}

// call sends an API request and decodes the JSON answer into out.
func (s *service) call(method, path string, body any, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && json.Unmarshal(data, out) != nil {
		s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode
}

func (s *service) submit(prompt string, extra map[string]any) string {
	s.t.Helper()
	body := map[string]any{"prompt": prompt}
	for k, v := range extra {
		body[k] = v
	}
	var out struct{ ID string }
	if code := s.call("POST", "/api/v1/tasks", body, &out); code != 202 || out.ID == "" {
		s.t.Fatalf("submit: %d %+v", code, out)
	}
	return out.ID
}

func (s *service) task(id string) task {
	s.t.Helper()
	var t task
	s.call("GET", "/api/v1/tasks/"+id, nil, &t)
	return t
}

func (s *service) waitState(id string, states ...string) task {
	s.t.Helper()
	var t task
	s.waitFor(func() bool {
		t = s.task(id)
		for _, st := range states {
			if t.State == st {
				return true
			}
		}
		return false
	}, fmt.Sprintf("task %s to reach %v", id, states))
	return t
}

func (s *service) pending(taskID string) []approval {
	var list struct{ Approvals []approval }
	s.call("GET", "/api/v1/approvals?state=pending&task="+taskID, nil, &list)
	return list.Approvals
}

func (s *service) events(id string) string {
	var evs []json.RawMessage
	var wrapped struct{ Events []json.RawMessage }
	req, _ := http.NewRequest("GET", s.url+"/api/v1/tasks/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if json.Unmarshal(data, &wrapped) == nil {
		evs = wrapped.Events
	}
	_ = evs
	return string(data)
}

// byPrompt answers each request by the task it belongs to (its first user
// message), so concurrent tasks can share one fake model.
func byPrompt(scripts map[string]func(req agenttest.Request) agenttest.Turn) []agenttest.Turn {
	return goalScript(60, func(req agenttest.Request) agenttest.Turn {
		for _, m := range req.Messages {
			if m.Role == "user" {
				for key, fn := range scripts {
					if strings.Contains(m.Content, key) {
						return fn(req)
					}
				}
				break
			}
		}
		return answer("unexpected request")
	})
}

// gitRepo makes a repository with one commit on main for workspace tests.
func gitRepo(t *testing.T) string {
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
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "readme"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestServeRunsAnAPITaskInAGitWorktree(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"add a changelog": func(req agenttest.Request) agenttest.Turn {
			if lastToolResult(req) != "" {
				return answer("Added CHANGELOG.md.")
			}
			return toolTurn(call("w", "write_file", `{"path":"CHANGELOG.md","content":"# Changelog\n"}`))
		},
	})...)
	repo := gitRepo(t)
	e.configure(fmt.Sprintf("\n[[workspaces]]\nname = \"app\"\nrepo = %q\n", repo))
	s := e.serve(t)
	id := s.submit("add a changelog", map[string]any{"workspace": "app", "posture": "auto"})
	got := s.waitState(id, "succeeded", "failed", "blocked")
	if got.State != "succeeded" || got.Result == nil {
		t.Fatalf("task = %+v\n%s", got, s.events(id))
	}
	if got.Result.Branch != "reasonix/"+id || !strings.Contains(got.Result.DiffStat, "CHANGELOG.md") || got.Result.FinalAnswer != "Added CHANGELOG.md." {
		t.Errorf("result = %+v", got.Result)
	}
	show := exec.Command("git", "show", "--stat", "--format=%s", "reasonix/"+id)
	show.Dir = repo
	out, err := show.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CHANGELOG.md") {
		t.Errorf("the task branch lacks the change: %v\n%s", err, out)
	}
	// The CLI client reads the same task.
	e.extra = append(e.extra, "REASONIX_API_TOKEN="+s.token)
	cli, stderr, code := e.run("tasks", "show", id, "--server", s.url)
	if code != 0 || !strings.Contains(cli, "succeeded") || !strings.Contains(cli, "CHANGELOG.md") {
		t.Errorf("tasks show: %d\n%s%s", code, cli, stderr)
	}
}

func TestServeApprovalHoldsNoWorkerAndResumesTheExactCall(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"needs approval": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("result: " + res)
			}
			return toolTurn(call("a1", "bash", `{"command":"echo approved-run > proof.txt && cat proof.txt"}`))
		},
		"quick one": func(req agenttest.Request) agenttest.Turn { return answer("quick done") },
	})...)
	e.configure("\n[runner]\nmax_concurrent_tasks = 1\n")
	s := e.serve(t)
	first := s.submit("this task needs approval", nil)
	s.waitState(first, "waiting_approval")
	// The only worker is free: a second task runs to the end meanwhile.
	second := s.submit("a quick one", nil)
	if got := s.waitState(second, "succeeded", "failed"); got.State != "succeeded" {
		t.Fatalf("second task = %+v", got)
	}
	aps := s.pending(first)
	if len(aps) != 1 || aps[0].Tool != "bash" || !strings.Contains(aps[0].Subject, "echo approved-run") {
		t.Fatalf("pending approvals = %+v", aps)
	}
	e.extra = append(e.extra, "REASONIX_API_TOKEN="+s.token)
	out, stderr, code := e.run("approvals", "allow", aps[0].ID, "--server", s.url)
	if code != 0 || !strings.Contains(out, "allow_once by token:admin") {
		t.Fatalf("approvals allow: %d %s %s", code, out, stderr)
	}
	got := s.waitState(first, "succeeded", "failed", "blocked")
	if got.State != "succeeded" || !strings.Contains(got.Result.FinalAnswer, "approved-run") {
		t.Fatalf("after approval: %+v\n%s", got, s.events(first))
	}
}

func TestServeDenyAndExpiryRefuseWithTheirCodes(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"deny me": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("told: " + res)
			}
			return toolTurn(call("d1", "bash", `{"command":"touch denied.txt"}`))
		},
		"let it expire": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("told: " + res)
			}
			return toolTurn(call("x1", "bash", `{"command":"touch expired.txt"}`))
		},
	})...)
	e.configure("\n[runner]\napproval_ttl = \"2s\"\n")
	s := e.serve(t)
	deny := s.submit("please deny me", nil)
	expire := s.submit("please let it expire", nil)
	s.waitState(deny, "waiting_approval")
	ap := s.pending(deny)[0]
	var decided approval
	if code := s.call("POST", "/api/v1/approvals/"+ap.ID, map[string]string{"decision": "deny", "note": "not on prod"}, &decided); code != 200 {
		t.Fatalf("deny: %d", code)
	}
	got := s.waitState(deny, "blocked", "succeeded", "failed")
	if got.State != "blocked" || !strings.Contains(got.Result.FinalAnswer, "declined") {
		t.Errorf("denied task = %+v", got)
	}
	got = s.waitState(expire, "blocked", "succeeded", "failed")
	if got.State != "blocked" || !strings.Contains(got.Result.FinalAnswer, "nobody answered in time") {
		t.Errorf("expired task = %+v\n%s", got, s.events(expire))
	}
	for _, f := range []string{"denied.txt", "expired.txt"} {
		if matches, _ := filepath.Glob(filepath.Join(e.home, "*", "*", f)); len(matches) > 0 {
			t.Errorf("a refused call ran: %v", matches)
		}
	}
}

func TestServeCancel(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"long job": func(req agenttest.Request) agenttest.Turn {
			return toolTurn(call("s", "bash", `{"command":"sleep 60"}`))
		},
	})...)
	e.configure("")
	s := e.serve(t)
	id := s.submit("a long job", map[string]any{"posture": "auto"})
	s.waitState(id, "running")
	s.waitFor(func() bool { return strings.Contains(s.events(id), "sleep 60") }, "the command to start")
	start := time.Now()
	if code := s.call("POST", "/api/v1/tasks/"+id+"/cancel", struct{}{}, nil); code != 202 {
		t.Fatalf("cancel: %d", code)
	}
	got := s.waitState(id, "cancelled")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v", d)
	}
	_ = got
}

// processesIn lists processes whose working directory is under dir, as
// "pid:command:cwd". A zombie has no cwd to read, so it is not listed.
func processesIn(dir string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && strings.HasPrefix(cwd, dir) {
			comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
			found = append(found, e.Name()+":"+strings.TrimSpace(string(comm))+":"+cwd)
		}
	}
	return found
}

func TestServeSIGTERMStopsQuicklyWithoutOrphans(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"sleepy": func(req agenttest.Request) agenttest.Turn {
			return toolTurn(call("s", "bash", `{"command":"sleep 300 & sleep 300"}`))
		},
	})...)
	e.configure("\n[serve]\ndrain_timeout = \"1s\"\n")
	s := e.serve(t)
	id := s.submit("a sleepy task", map[string]any{"posture": "auto"})
	s.waitFor(func() bool { return strings.Contains(s.events(id), "sleep 300") }, "the command to start")
	// Both sleeps must run before the signal, or finding none afterwards
	// would prove nothing.
	s.waitFor(func() bool {
		n := 0
		for _, p := range processesIn(e.home) {
			if strings.Contains(p, ":sleep:") {
				n++
			}
		}
		return n == 2
	}, "both sleeps to start")
	start := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not exit within 10s of a 1s drain\n%s", s.stderr.String())
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("exit took %v: the running step did not get its 1s drain", d)
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d\n%s", code, s.stderr.String())
	}
	// The kernel finishes killing them asynchronously; a real orphan (a
	// sleep 300) would still be there at the deadline.
	eventually.NoError(t, 10*time.Second, func() error {
		if left := processesIn(e.home); len(left) > 0 {
			return fmt.Errorf("orphan processes: %v", left)
		}
		return nil
	})
	// The task was handed over: after the restart it runs again by itself.
	s2 := e.serve(t)
	if evs := s2.events(id); !strings.Contains(evs, `"type":"task_released"`) || strings.Contains(evs, `"type":"task_interrupted"`) {
		t.Errorf("after the drain: %s", evs)
	}
	s2.waitFor(func() bool { return strings.Count(s2.events(id), `"state":"running"`) >= 2 }, "the task to run again without a resume")
	e.extra = append(e.extra, "REASONIX_API_TOKEN="+s2.token)
	if _, _, code := e.run("tasks", "cancel", id, "--server", s2.url); code != 0 {
		t.Errorf("tasks cancel: %d", code)
	}
	s2.waitState(id, "cancelled")
}

func TestServeSurvivesSIGKILL(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"running when killed": func(req agenttest.Request) agenttest.Turn {
			return toolTurn(call("k", "bash", `{"command":"sleep 300"}`))
		},
		"waiting when killed": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("after restart: " + res)
			}
			mu.Lock()
			runs++
			mu.Unlock()
			return toolTurn(call("w", "bash", `{"command":"echo resumed-after-crash > crash.txt && cat crash.txt"}`))
		},
	})...)
	e.configure("")
	s := e.serve(t)
	running := s.submit("task running when killed", map[string]any{"posture": "auto"})
	waiting := s.submit("task waiting when killed", nil)
	s.waitFor(func() bool { return strings.Contains(s.events(running), "sleep 300") }, "the command to start")
	if got := s.waitState(waiting, "waiting_approval", "succeeded", "failed", "blocked"); got.State != "waiting_approval" {
		t.Fatalf("waiting task = %+v\n%s", got, s.events(waiting))
	}
	s.cmd.Process.Kill()
	<-s.done

	s2 := e.serve(t)
	if got := s2.waitState(running, "interrupted"); got.State != "interrupted" {
		t.Errorf("running task after the crash = %+v", got)
	}
	aps := s2.pending(waiting)
	if len(aps) != 1 {
		t.Fatalf("the pending approval did not survive the crash: %+v", aps)
	}
	if code := s2.call("POST", "/api/v1/approvals/"+aps[0].ID, map[string]string{"decision": "allow_once"}, nil); code != 200 {
		t.Fatalf("allow: %d", code)
	}
	got := s2.waitState(waiting, "succeeded", "failed", "blocked")
	if got.State != "succeeded" || !strings.Contains(got.Result.FinalAnswer, "resumed-after-crash") {
		t.Fatalf("resumed task = %+v\n%s", got, s2.events(waiting))
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 1 {
		t.Errorf("the model was asked to start the waiting task %d times; the crash lost its conversation", runs)
	}
}

func TestServeRefusesASecondServiceOnOneDataDir(t *testing.T) {
	e := newE2E(t)
	e.configure("")
	e.serve(t)
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = e.work
	cmd.Env = baseEnv(e.home)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(string(out), "another reasonix serve is using") {
		t.Fatalf("second serve: %v\n%s", err, out)
	}
}

func TestTasksSubmitAndWatch(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"write the notes": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("notes written")
			}
			return toolTurn(call("w", "bash", `{"command":"echo notes > notes.txt"}`))
		},
	})...)
	e.configure("")
	s := e.serve(t)
	e.extra = append(e.extra, "REASONIX_API_TOKEN="+s.token, "USER=erin")
	cmd := exec.Command(binary, "tasks", "submit", "--server", s.url, "--wait", "write", "the", "notes")
	cmd.Dir = e.work
	cmd.Env = append(baseEnv(e.home), e.extra...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The watcher shows the approval request; a person allows it from elsewhere.
	s.waitFor(func() bool { return strings.Contains(out.String(), "? approval ") }, "the watcher to show the approval")
	id := strings.Fields(out.String())[0]
	aps := s.pending(id)
	if len(aps) != 1 {
		t.Fatalf("approvals of %s: %+v\n%s", id, aps, out.String())
	}
	if code := s.call("POST", "/api/v1/approvals/"+aps[0].ID, map[string]string{"decision": "allow_once"}, nil); code != 200 {
		t.Fatalf("allow: %d", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tasks submit --wait: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the watcher did not end\n%s", out.String())
	}
	for _, want := range []string{"state: waiting_approval", "allow_once by token:admin", "state: succeeded", "notes written"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("watch output lacks %q:\n%s", want, out.String())
		}
	}
	// The requester is the token's principal, whatever $USER says.
	if got := s.task(id); got.Source != "cli" || got.Requester != "token:admin" {
		t.Errorf("task = %+v", got)
	}
}
