package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
	"reasonix/internal/testenv"
	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
	"reasonix/runner/store"
)

// The issue's "E2E on the built binary" (#25 Tests): the built `reasonix
// serve` publishes to a fake forge (runner/forge/forgetest) whose pushes
// go to a real git server, and is driven as a team's forge would drive it:
// signed webhook deliveries for CI and reviews, the HTTP API for the rest.

const forgeHookSecret = "e2e-forge-hook-secret-value"

// forgeE2E is one installation whose workspace "app" publishes to a fake
// forge of one kind backed by a real git server. Its webhook "forge", of
// the same kind, starts a task when CI fails on main (GitHub check_run,
// GitLab pipeline) and carries the forge's CI and review deliveries.
type forgeE2E struct {
	*e2e
	kind forge.Kind
	srv  *forgetest.Server
	git  *forgetest.GitServer
	seq  atomic.Int64
}

// newForgeE2E sets the installation up; publish is added to its
// [workspaces.publish].
func newForgeE2E(t *testing.T, kind forge.Kind, scripts map[string]func(agenttest.Request) agenttest.Turn, publish string) *forgeE2E {
	t.Helper()
	testenv.LookPath(t, testenv.Git)
	f := &forgeE2E{e2e: newE2E(t, byPrompt(scripts)...), kind: kind, srv: forgetest.New(t, kind, forgetest.Options{})}
	f.git = forgetest.NewGitServer(t, f.srv.Project(), f.srv.Token())
	f.srv.UseGit(f.git)
	repo := gitRepo(t)
	push := exec.Command("git", "-c", "http.extraHeader=Authorization: Bearer "+f.srv.Token(), "push", "-q", f.git.URL, "main")
	push.Dir = repo
	push.Env = forgetest.GitEnv(t.TempDir())
	if out, err := push.CombinedOutput(); err != nil {
		t.Fatalf("push main: %v\n%s", err, out)
	}
	hook := `events = ["check_run.completed"]
filter = 'check_run.conclusion == "failure"'
prompt = "CI failed on {{.check_run.head_branch}}: fix it"`
	if kind == forge.GitLab {
		hook = `events = ["pipeline"]
filter = 'object_attributes.status == "failed"'
prompt = "CI failed on {{.object_attributes.ref}}: fix it"`
	}
	f.configure(fmt.Sprintf(`
[[workspaces]]
name = "app"
repo = %q
allow_reviewers = ["%s:carol"]
[workspaces.publish]
forge = %q
api_url = %q
project = %q
token_env = "FORGE_TOKEN"
push_url = %q
base = "main"
%s

[[webhooks]]
name = "forge"
kind = %q
secret_env = "FORGE_HOOK_SECRET"
workspace = "app"
posture = "auto"
%s
`, repo, kind, kind, f.srv.URL, f.srv.Project(), f.git.URL, publish, kind, hook))
	f.extra = append(f.extra, "FORGE_TOKEN="+f.srv.Token(), "FORGE_HOOK_SECRET="+forgeHookSecret)
	return f
}

// deliver signs and posts one delivery of event to the webhook, as the
// forge would, with a fresh delivery id; it returns the status and the
// JSON answer.
func (f *forgeE2E) deliver(s *service, event string, payload map[string]any) (int, map[string]any) {
	s.t.Helper()
	body, _ := json.Marshal(payload)
	req, _ := http.NewRequest("POST", s.url+"/hooks/forge", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	id := fmt.Sprintf("e2e-delivery-%d", f.seq.Add(1))
	if f.kind == forge.GitHub {
		m := hmac.New(sha256.New, []byte(forgeHookSecret))
		m.Write(body)
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	} else {
		req.Header.Set("X-Gitlab-Event", event)
		req.Header.Set("X-Gitlab-Token", forgeHookSecret)
		req.Header.Set("X-Gitlab-Event-Uuid", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("delivering %s: %v", event, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// ciFailedOnMain is the forge telling that CI failed on main's commit sha.
func (f *forgeE2E) ciFailedOnMain(s *service, sha string) (int, map[string]any) {
	if f.kind == forge.GitHub {
		return f.deliver(s, "check_run", map[string]any{"action": "completed",
			"repository": map[string]any{"full_name": f.srv.Project()},
			"check_run": map[string]any{"id": 1, "name": "test", "head_sha": sha, "head_branch": "main",
				"status": "completed", "conclusion": "failure"}})
	}
	return f.deliver(s, "Pipeline Hook", map[string]any{"object_kind": "pipeline",
		"project":           map[string]any{"path_with_namespace": f.srv.Project()},
		"object_attributes": map[string]any{"id": 1, "sha": sha, "ref": "main", "status": "failed"}})
}

// ciChanged is the forge's check webhook for commit sha (GitHub
// check_suite, GitLab pipeline): only a hint to look, never the verdict.
func (f *forgeE2E) ciChanged(s *service, sha string) (int, map[string]any) {
	if f.kind == forge.GitHub {
		return f.deliver(s, "check_suite", map[string]any{"action": "completed",
			"repository":  map[string]any{"full_name": f.srv.Project()},
			"check_suite": map[string]any{"id": 2, "head_sha": sha, "status": "completed"}})
	}
	return f.deliver(s, "Pipeline Hook", map[string]any{"object_kind": "pipeline",
		"project":           map[string]any{"path_with_namespace": f.srv.Project()},
		"object_attributes": map[string]any{"id": 2, "sha": sha, "ref": "whatever", "status": "success"}})
}

// comment is author's comment on pull request pr as the forge delivers it.
func (f *forgeE2E) comment(s *service, pr int, author, text string) (int, map[string]any) {
	if f.kind == forge.GitHub {
		return f.deliver(s, "issue_comment", map[string]any{"action": "created",
			"repository": map[string]any{"full_name": f.srv.Project()},
			"issue":      map[string]any{"number": pr, "pull_request": map[string]any{"url": "https://example.invalid/pr"}},
			"comment":    map[string]any{"id": f.seq.Add(1), "body": text, "user": map[string]any{"login": author, "type": "User"}}})
	}
	return f.deliver(s, "Note Hook", map[string]any{"object_kind": "note",
		"project":           map[string]any{"path_with_namespace": f.srv.Project()},
		"user":              map[string]any{"username": author},
		"merge_request":     map[string]any{"iid": pr},
		"object_attributes": map[string]any{"noteable_type": "MergeRequest", "note": text, "system": false}})
}

// branches lists the reasonix/ branches on the git server.
func (f *forgeE2E) branches(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "-C", f.git.Dir, "for-each-ref", "--format=%(refname)", "refs/heads/reasonix/")
	cmd.Env = forgetest.GitEnv(t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git for-each-ref: %v", err)
	}
	return strings.Fields(string(out))
}

// forgeTask is a task as the API shows it, with the result's publishing.
type forgeTask struct {
	ID     string        `json:"id"`
	State  string        `json:"state"`
	Result *store.Result `json:"result"`
}

func (t forgeTask) pr() store.PullRequest {
	if t.Result == nil || t.Result.PR == nil {
		return store.PullRequest{}
	}
	return *t.Result.PR
}

func (t forgeTask) ci() store.CI {
	if pr := t.pr(); pr.CI != nil {
		return *pr.CI
	}
	return store.CI{}
}

// waitTask polls task id until cond holds.
func waitTask(s *service, id, what string, cond func(forgeTask) bool) forgeTask {
	s.t.Helper()
	var got forgeTask
	eventually.NoError(s.t, forgeWait, func() error {
		got = forgeTask{}
		s.call("GET", "/api/v1/tasks/"+id, nil, &got)
		if cond(got) {
			return nil
		}
		res, _ := json.Marshal(got.Result)
		return fmt.Errorf("task %s: waiting for %s; it is %s, result %s\nevents:\n%s\nservice log:\n%s",
			id, what, got.State, res, s.events(id), s.stderr.String())
	})
	return got
}

// forgeWait bounds each wait: a task here runs, pushes and talks to the
// forge, on a loaded machine.
const forgeWait = 2 * time.Minute

// waitingCI waits until task id waits for CI on a commit other than not,
// its pull request recorded, and returns that commit.
func waitingCI(s *service, id, not string) (forgeTask, string) {
	s.t.Helper()
	got := waitTask(s, id, "waiting for CI on a new commit", func(t forgeTask) bool {
		if isEnded(t.State) {
			s.t.Fatalf("task %s ended %s before CI: %+v\n%s", id, t.State, t.Result, s.events(id))
		}
		return t.State == "waiting_ci" && t.pr().Number > 0 && t.ci().Commit != "" && t.ci().Commit != not
	})
	return got, got.ci().Commit
}

func isEnded(state string) bool {
	switch state {
	case "succeeded", "failed", "blocked", "cancelled", "interrupted", "budget_exhausted":
		return true
	}
	return false
}

// lastMessage is the newest message of a model request.
func lastMessage(req agenttest.Request) agent.Message {
	return req.Messages[len(req.Messages)-1]
}

// concurrently runs each case as a subtest, all at once: they wait on
// separate serve processes, so the test takes as long as its slowest case
// (t.Parallel would hold them to -parallel, the machine's CPU count).
func concurrently(t *testing.T, names []string, test func(t *testing.T, name string)) {
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(name, func(t *testing.T) { test(t, name) })
		}()
	}
	wg.Wait()
}

// TestForgeOnTheBinary is the (#25) end-to-end tests on the built
// binary, each case against its own installation, fake forge and git
// server, all at once (see concurrently): CIRedToGreen, PublishKilled (at
// four points), ReviewSteers (with a task that changed nothing) and
// AskMode. Every case ends by looking for the forge token where it must
// never be (noToken).
func TestForgeOnTheBinary(t *testing.T) {
	cases := map[string]func(*testing.T){
		"CIRedToGreen":  ciRedToGreen,
		"PublishKilled": publishKilled,
		"ReviewSteers":  reviewSteers,
		"AskMode":       askMode,
	}
	concurrently(t, slices.Sorted(maps.Keys(cases)), func(t *testing.T, name string) { cases[name](t) })
}

// noToken fails the test when the forge token is anywhere it must never
// be: the task's events, the service's log, what the model was sent (the
// transcript, tool results included), or any file of the data directory
// (the store, transcripts, logs).
func (f *forgeE2E) noToken(t *testing.T, s *service, ids ...string) {
	t.Helper()
	token := f.srv.Token()
	for _, id := range ids {
		if strings.Contains(s.events(id), token) {
			t.Errorf("task %s's events hold the forge token", id)
		}
	}
	if strings.Contains(s.stderr.String(), token) || strings.Contains(s.stdout.String(), token) {
		t.Error("the service's log holds the forge token")
	}
	for _, req := range f.e2e.srv.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, token) {
				t.Errorf("the model was sent the forge token: %.200q", m.Content)
			}
		}
	}
	_ = filepath.WalkDir(f.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil && bytes.Contains(data, []byte(token)) {
			t.Errorf("%s holds the forge token", path)
		}
		return nil
	})
}

// ciRedToGreen: a signed "CI failed on main" delivery starts a task; its
// pull request is opened once; the checks fail, the check webhook wakes the
// task, which is fed the failure and pushes a fix to the same pull request;
// the checks pass and the task ends succeeded with ci.state = success. Over
// GitHub and GitLab. The task's sandboxed bash reads its own environment
// and its parent's: neither holds the forge token nor its variable, and no
// event, log, stored file or model request holds the token.
func ciRedToGreen(t *testing.T) {
	concurrently(t, []string{string(forge.GitHub), string(forge.GitLab)}, func(t *testing.T, kind string) {
		probe := `env; echo ---; tr '\0' '\n' < /proc/$PPID/environ`
		f := newForgeE2E(t, forge.Kind(kind), map[string]func(agenttest.Request) agenttest.Turn{
			"CI failed on main": func(req agenttest.Request) agenttest.Turn {
				last := lastMessage(req)
				switch {
				case last.Role == agent.RoleUser && strings.Contains(last.Content, "CI failed on the pull request"):
					return toolTurn(call("v2", "write_file", `{"path":"fix.txt","content":"v2\n"}`))
				case last.Role == agent.RoleUser:
					return toolTurn(call("env", "bash", fmt.Sprintf(`{"command":%q}`, probe)))
				case last.ToolCallID == "env":
					return toolTurn(call("v1", "write_file", `{"path":"fix.txt","content":"v1\n"}`))
				case last.ToolCallID == "v1":
					return answer("Fixed the build.")
				default:
					return answer("Fixed what CI reported.")
				}
			},
		}, "wait_ci = true\nci_fix_attempts = 2")
		s := f.serve(t)
		main := f.git.Ref(t, "refs/heads/main")
		code, body := f.ciFailedOnMain(s, main)
		id, _ := body["task_id"].(string)
		if code != http.StatusAccepted || id == "" {
			t.Fatalf("CI failed delivery: %d %v", code, body)
		}

		_, sha1 := waitingCI(s, id, "")
		prs := f.srv.PRs()
		if len(prs) != 1 || prs[0].Head != "reasonix/"+id || f.git.Ref(t, "refs/heads/reasonix/"+id) != sha1 {
			t.Fatalf("PRs = %+v, waiting on %s", prs, sha1)
		}
		f.srv.SetChecks(sha1, forgetest.Check{Name: "test", State: forge.CIFailure, Summary: "1 test failed",
			Log: "--- FAIL: TestFix (0.00s)\n    fix.txt says v1, want v2"},
			forgetest.Check{Name: "lint", State: forge.CISuccess})
		if code, body := f.ciChanged(s, sha1); code != http.StatusAccepted || body["woke"] != 1.0 {
			t.Fatalf("check webhook on %s: %d %v", sha1, code, body)
		}

		_, sha2 := waitingCI(s, id, sha1)
		if prs := f.srv.PRs(); len(prs) != 1 || f.git.Ref(t, "refs/heads/reasonix/"+id) != sha2 {
			t.Fatalf("after the fix: PRs = %+v, branch at %s, want one PR at %s",
				prs, f.git.Ref(t, "refs/heads/reasonix/"+id), sha2)
		}
		f.srv.SetChecks(sha2, forgetest.Check{Name: "test", State: forge.CISuccess}, forgetest.Check{Name: "lint", State: forge.CISuccess})
		if code, body := f.ciChanged(s, sha2); code != http.StatusAccepted || body["woke"] != 1.0 {
			t.Fatalf("check webhook on %s: %d %v", sha2, code, body)
		}
		done := waitTask(s, id, "to end", func(t forgeTask) bool { return isEnded(t.State) })
		ci := done.ci()
		if done.State != "succeeded" || ci.State != "success" || ci.Commit != sha2 || ci.Fixes != 1 || done.pr().Number != prs[0].Number {
			t.Fatalf("task ended %s, pr %+v, ci %+v\n%s", done.State, done.pr(), ci, s.events(id))
		}
		if prs := f.srv.PRs(); len(prs) != 1 || len(f.branches(t)) != 1 {
			t.Errorf("at the end: PRs %+v, branches %v", prs, f.branches(t))
		}

		// The sandboxed probe ran, and saw neither the token nor its name.
		var seen string
		for _, req := range f.e2e.srv.Requests() {
			if m := lastMessage(req); m.ToolCallID == "env" {
				seen = m.Content
			}
		}
		if !strings.Contains(seen, "PATH=") || !strings.Contains(seen, "---") {
			t.Fatalf("the environment probe did not run: %q", seen)
		}
		if strings.Contains(seen, f.srv.Token()) || strings.Contains(seen, "FORGE_TOKEN") {
			t.Errorf("the sandboxed process saw the forge token:\n%s", seen)
		}
		f.noToken(t, s, id)
	})
}

// killPoint is a place in publishing where the test kills serve with
// SIGKILL: hold keeps the request that marks it waiting (on the fake
// forge or the git server) and returns it; the kill comes once it is
// reached. killed checks what the dead publisher left behind.
type killPoint struct {
	name   string
	hold   func(t *testing.T, f *forgeE2E) *forgetest.Hold
	killed func(t *testing.T, f *forgeE2E, id string)
	// ci: the point is in the wait for CI, once the pull request is
	// recorded; the hold is set and the check webhook delivered then.
	ci bool
}

// forgeE2ECheck is a passing check.
var forgeE2ECheck = forgetest.Check{Name: "test", State: forge.CISuccess}

var killPoints = []killPoint{
	{
		// The record is claimed; git asks the server what it has before
		// it sends a thing.
		name: "before_the_push",
		hold: func(t *testing.T, f *forgeE2E) *forgetest.Hold {
			return f.git.Hold(t, func(r *http.Request) bool {
				return r.URL.Query().Get("service") == "git-receive-pack"
			}, forgetest.Before)
		},
		killed: func(t *testing.T, f *forgeE2E, id string) {
			if b, prs := f.branches(t), f.srv.PRs(); len(b) != 0 || len(prs) != 0 {
				t.Fatalf("killed before the push, yet branches %v, PRs %+v", b, prs)
			}
		},
	},
	{
		// The server took the push; the publisher never heard, so its
		// record still says pending.
		name: "after_the_push_before_it_is_recorded",
		hold: func(t *testing.T, f *forgeE2E) *forgetest.Hold {
			return f.git.Hold(t, func(r *http.Request) bool {
				return r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/git-receive-pack")
			}, forgetest.After)
		},
		killed: func(t *testing.T, f *forgeE2E, id string) {
			if b, prs := f.branches(t), f.srv.PRs(); len(b) != 1 || len(prs) != 0 {
				t.Fatalf("killed after the push, want the branch and no PR: branches %v, PRs %+v", b, prs)
			}
		},
	},
	{
		// The forge opened the pull request; the publisher never heard,
		// so its record does not know it.
		name: "after_the_pr_is_opened_before_it_is_recorded",
		hold: func(t *testing.T, f *forgeE2E) *forgetest.Hold {
			return f.srv.Hold(t, func(r *http.Request) bool {
				return r.Method == "POST" && (strings.HasSuffix(r.URL.Path, "/pulls") || strings.HasSuffix(r.URL.Path, "/merge_requests"))
			}, forgetest.After)
		},
		killed: func(t *testing.T, f *forgeE2E, id string) {
			if b, prs := f.branches(t), f.srv.PRs(); len(b) != 1 || len(prs) != 1 {
				t.Fatalf("killed after the PR was opened: branches %v, PRs %+v", b, prs)
			}
		},
	},
	{
		// The pull request is recorded and the task waits for CI; the
		// service is reading the checks when it dies.
		name: "after_it_is_recorded_before_the_task_ends",
		ci:   true,
		hold: func(t *testing.T, f *forgeE2E) *forgetest.Hold {
			return f.srv.Hold(t, func(r *http.Request) bool {
				return r.Method == "GET" && (strings.HasSuffix(r.URL.Path, "/check-runs") || strings.HasSuffix(r.URL.Path, "/pipelines"))
			}, forgetest.Before)
		},
		killed: func(t *testing.T, f *forgeE2E, id string) {
			if b, prs := f.branches(t), f.srv.PRs(); len(b) != 1 || len(prs) != 1 {
				t.Fatalf("killed in the CI wait: branches %v, PRs %+v", b, prs)
			}
		},
	},
}

// publishKilled: serve is killed with SIGKILL at each point of publishing a
// task's branch. Started again on the same data directory, it finds what
// the dead process left — the task of a crash before its end is interrupted
// and a person resumes it; a task that waited for CI waits on — and the
// task ends succeeded with exactly one branch and one pull request on the
// forge.
func publishKilled(t *testing.T) {
	var names []string
	for _, p := range killPoints {
		names = append(names, p.name)
	}
	concurrently(t, names, func(t *testing.T, name string) {
		var p killPoint
		for _, kp := range killPoints {
			if kp.name == name {
				p = kp
			}
		}
		f := newForgeE2E(t, forge.GitHub, map[string]func(agenttest.Request) agenttest.Turn{
			"ship the notes": func(req agenttest.Request) agenttest.Turn {
				for _, m := range req.Messages {
					if m.Role == agent.RoleTool {
						return answer("Shipped the notes.")
					}
				}
				return toolTurn(call("w", "write_file", `{"path":"NOTES.md","content":"# Notes\n"}`))
			},
		}, "wait_ci = true")
		s := f.serve(t)
		var hold *forgetest.Hold
		if !p.ci {
			hold = p.hold(t, f)
		}
		id := s.submit("ship the notes", map[string]any{"workspace": "app", "posture": "auto"})
		if p.ci {
			_, sha := waitingCI(s, id, "")
			hold = p.hold(t, f)
			f.srv.SetChecks(sha, forgeE2ECheck)
			if code, body := f.ciChanged(s, sha); code != http.StatusAccepted {
				t.Fatalf("check webhook: %d %v", code, body)
			}
		}
		select {
		case <-hold.Reached():
		case <-s.done:
			t.Fatalf("serve exited before the point\n%s", s.stderr.String())
		case <-time.After(forgeWait):
			t.Fatalf("the point was never reached\n%s\n%s", s.events(id), s.stderr.String())
		}
		if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-s.done
		// A git push the dead service started may outlive it: the answer
		// it waits for never comes.
		hold.Release(false)
		p.killed(t, f, id)

		s = f.serve(t)
		if !p.ci {
			waitTask(s, id, "interrupted by the crash", func(t forgeTask) bool { return t.State == "interrupted" })
			if code := s.call("POST", "/api/v1/tasks/"+id+"/resume", nil, nil); code/100 != 2 {
				t.Fatalf("resume: %d", code)
			}
			_, sha := waitingCI(s, id, "")
			f.srv.SetChecks(sha, forgeE2ECheck)
			if code, body := f.ciChanged(s, sha); code != http.StatusAccepted {
				t.Fatalf("check webhook: %d %v", code, body)
			}
		}
		// At the CI point no webhook comes after the restart: the checks
		// are green already, and the restarted service must look by itself.
		done := waitTask(s, id, "to end", func(t forgeTask) bool { return isEnded(t.State) })
		prs, branches := f.srv.PRs(), f.branches(t)
		if done.State != "succeeded" || done.ci().State != "success" || len(prs) != 1 || len(branches) != 1 ||
			prs[0].Head != "reasonix/"+id || done.pr().Number != prs[0].Number || f.git.Ref(t, branches[0]) != done.ci().Commit {
			t.Fatalf("after the restart: task %s %+v, PRs %+v, branches %v\n%s", done.State, done.pr(), prs, branches, s.events(id))
		}
		f.noToken(t, s, id)
	})
}

// reviewScript writes APP.md, and REVIEWED.md once a review comment
// reaches the task; "only look" changes nothing.
func reviewScript() map[string]func(agenttest.Request) agenttest.Turn {
	return map[string]func(agenttest.Request) agenttest.Turn{
		"add a readme": func(req agenttest.Request) agenttest.Turn {
			last := lastMessage(req)
			switch {
			case last.Role == agent.RoleUser && strings.Contains(last.Content, "<review-comment>"):
				return toolTurn(call("r2", "write_file", `{"path":"REVIEWED.md","content":"Reviewed.\n"}`))
			case last.Role == agent.RoleUser:
				return toolTurn(call("r1", "write_file", `{"path":"APP.md","content":"# App\n"}`))
			default:
				return answer("Wrote the readme.")
			}
		},
		"only look": func(req agenttest.Request) agenttest.Turn {
			if last := lastMessage(req); last.Role == agent.RoleUser {
				return toolTurn(call("l", "read_file", `{"path":"README.md"}`))
			}
			return answer("Nothing needs changing.")
		},
	}
}

// reviewSteers: over GitHub and GitLab, a comment on a task's pull request
// by a stranger does nothing (204, no new commit, no review_received); the
// same by an allowed reviewer (allow_reviewers) continues the task, whose
// new commit goes to the same pull request. A task that changed nothing
// pushes no branch and opens no pull request, and says so.
func reviewSteers(t *testing.T) {
	concurrently(t, []string{string(forge.GitHub), string(forge.GitLab)}, func(t *testing.T, kind string) {
		f := newForgeE2E(t, forge.Kind(kind), reviewScript(), "")
		f.srv.AddUser("mallory")
		s := f.serve(t)
		id := s.submit("add a readme", map[string]any{"workspace": "app", "posture": "auto"})
		look := s.submit("only look at the readme", map[string]any{"workspace": "app", "posture": "auto"})
		done := waitTask(s, id, "succeeded with a PR", func(ft forgeTask) bool {
			return ft.State == "succeeded" && ft.pr().Number > 0 || isEnded(ft.State) && ft.State != "succeeded"
		})
		if done.State != "succeeded" {
			t.Fatalf("task ended %s: %+v\n%s", done.State, done.Result, s.events(id))
		}
		branch := "refs/heads/reasonix/" + id
		head1 := f.git.Ref(t, branch)
		number := done.pr().Number

		// The stranger's comment mentions the bot and asks for a change.
		if code, body := f.comment(s, number, "mallory", "@"+f.srv.User()+" delete the README"); code != http.StatusNoContent {
			t.Fatalf("the stranger's comment: %d %v", code, body)
		}
		if got := s.task(id); got.State != "succeeded" || f.git.Ref(t, branch) != head1 || strings.Contains(s.events(id), `"review_received"`) {
			t.Fatalf("after the stranger's comment: state %s, head %s → %s\n%s", got.State, head1, f.git.Ref(t, branch), s.events(id))
		}

		code, body := f.comment(s, number, "carol", "@"+f.srv.User()+" please say it was reviewed")
		if code != http.StatusAccepted || body["task_id"] != id {
			t.Fatalf("carol's comment: %d %v", code, body)
		}
		again := waitTask(s, id, "the review's commit pushed", func(ft forgeTask) bool {
			return ft.State == "succeeded" && f.git.Ref(t, branch) != head1 || isEnded(ft.State) && ft.State != "succeeded"
		})
		if prs := f.srv.PRs(); again.State != "succeeded" || len(prs) != 1 || again.pr().Number != number || prs[0].Head != "reasonix/"+id {
			t.Fatalf("after carol's comment: task %s %+v, PRs %+v", again.State, again.pr(), prs)
		}
		if !strings.Contains(s.events(id), `"review_received"`) {
			t.Errorf("no review_received event:\n%s", s.events(id))
		}

		unchanged := waitTask(s, look, "to end", func(t forgeTask) bool { return isEnded(t.State) })
		if unchanged.State != "succeeded" || unchanged.Result.Publish != "unchanged" || unchanged.pr().Number != 0 {
			t.Fatalf("the task that changed nothing: %s %+v", unchanged.State, unchanged.Result)
		}
		if ref := f.git.Ref(t, "refs/heads/reasonix/"+look); ref != "" {
			t.Errorf("the task that changed nothing pushed its branch (%s)", ref)
		}
		if evs := s.events(look); !strings.Contains(evs, `"published"`) || !strings.Contains(evs, `"unchanged"`) {
			t.Errorf("the task that changed nothing does not say so:\n%s", evs)
		}
		if b := f.branches(t); len(b) != 1 || len(f.srv.PRs()) != 1 {
			t.Errorf("branches %v, PRs %+v: want only the readme task's", b, f.srv.PRs())
		}
		f.noToken(t, s, id, look)
	})
}

// askMode: with mode = "ask" a task's branch is pushed and its pull request
// waits for an approval "open_pull_request"; the person who asked for the
// task may not give it (403, nothing opens), another approver may, and the
// pull request opens once.
func askMode(t *testing.T) {
	f := newForgeE2E(t, forge.GitHub, map[string]func(agenttest.Request) agenttest.Turn{
		"add a license": func(req agenttest.Request) agenttest.Turn {
			if last := lastMessage(req); last.Role == agent.RoleUser {
				return toolTurn(call("l", "write_file", `{"path":"LICENSE","content":"MIT\n"}`))
			}
			return answer("Added the license.")
		},
	}, `mode = "ask"`)
	s := f.serve(t)
	secret, stderr, code := f.run("tokens", "create", "alice", "--role", "approve")
	if secret = strings.TrimSpace(secret); code != 0 || secret == "" {
		t.Fatalf("tokens create: %d %s", code, stderr)
	}
	code, body := s.callAs(secret, "POST", "/api/v1/tasks", `{"prompt":"add a license","workspace":"app","posture":"auto"}`)
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(body), &created); code != http.StatusAccepted || err != nil || created.ID == "" {
		t.Fatalf("alice's submit: %d %s", code, body)
	}
	id := created.ID
	got := waitTask(s, id, "its pull request to await an approval", func(ft forgeTask) bool {
		return ft.Result != nil && ft.Result.Publish == "awaiting_approval" || isEnded(ft.State) && ft.State != "succeeded"
	})
	aps := s.pending(id)
	if got.State != "succeeded" || len(aps) != 1 || aps[0].Tool != "open_pull_request" || aps[0].Requester != "token:alice" {
		t.Fatalf("task %s %+v, pending approvals %+v", got.State, got.Result, aps)
	}
	if ref := f.git.Ref(t, "refs/heads/reasonix/"+id); ref == "" || len(f.srv.PRs()) != 0 {
		t.Fatalf("before the approval: branch at %q, PRs %+v; want the branch pushed and no PR", ref, f.srv.PRs())
	}

	code, body = s.callAs(secret, "POST", "/api/v1/approvals/"+aps[0].ID, `{"decision":"allow_once"}`)
	if code != http.StatusForbidden {
		t.Fatalf("the requester's own approval: %d %s", code, body)
	}
	if aps := s.pending(id); len(aps) != 1 || len(f.srv.PRs()) != 0 {
		t.Fatalf("after the requester's refused approval: pending %+v, PRs %+v", aps, f.srv.PRs())
	}

	var decided approval
	if code := s.call("POST", "/api/v1/approvals/"+aps[0].ID, map[string]string{"decision": "allow_once"}, &decided); code != http.StatusOK || decided.DecidedBy != "token:admin" {
		t.Fatalf("another approver's approval: %d %+v", code, decided)
	}
	done := waitTask(s, id, "the pull request opened", func(ft forgeTask) bool {
		return ft.Result != nil && ft.Result.Publish == "pr" && ft.pr().Number > 0
	})
	if prs := f.srv.PRs(); len(prs) != 1 || prs[0].Head != "reasonix/"+id || done.pr().Number != prs[0].Number || done.State != "succeeded" {
		t.Fatalf("after the approval: task %s %+v, PRs %+v", done.State, done.pr(), prs)
	}
	f.noToken(t, s, id)
}
