package publish_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
	"reasonix/runner/internal/publish"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// clock is a store clock a test moves, so a lease a "crashed" publisher
// left behind runs out without waiting.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// bench is one forge (fake API + real git server), a store and a local
// repository holding a task's branch.
type bench struct {
	t      testing.TB
	kind   forge.Kind
	srv    *forgetest.Server
	git    *forgetest.GitServer
	f      forge.Forge
	st     *store.Store
	clock  *clock
	repo   string
	task   string
	branch string
	commit string
}

func newBench(t testing.TB, kind forge.Kind) *bench {
	t.Helper()
	b := &bench{t: t, kind: kind, clock: &clock{now: time.Now()}}
	b.srv = forgetest.New(t, kind, forgetest.Options{})
	b.git = forgetest.NewGitServer(t, b.srv.Project(), b.srv.Token())
	b.srv.UseGit(b.git)
	f, err := forge.New(b.srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	b.f = f
	b.st = storetest.SQLite(t, store.Config{Now: b.clock.Now})

	// A repository whose main is on the forge and whose task branch has one
	// commit more.
	b.repo = t.TempDir()
	b.run("init", "--quiet", "--initial-branch=main")
	b.run("commit", "--quiet", "--allow-empty", "-m", "base")
	b.run("-c", "http.extraHeader=Authorization: Bearer "+b.srv.Token(), "push", "--quiet", b.git.URL, "main")
	task, _, err := b.st.CreateTask(t.Context(), store.NewTask{Source: store.SourceAPI, Requester: "token:admin", Prompt: "fix the bug"})
	if err != nil {
		t.Fatal(err)
	}
	b.task, b.branch = task.ID, "reasonix/"+task.ID
	b.run("checkout", "--quiet", "-b", b.branch)
	b.run("commit", "--quiet", "--allow-empty", "-m", "the fix")
	b.commit = b.run("rev-parse", "HEAD")
	return b
}

func (b *bench) run(args ...string) string {
	b.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = b.repo
	cmd.Env = forgetest.GitEnv(b.t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// succeed enqueues the task's publish and ends the task succeeded, as the
// runner does.
func (b *bench) succeed() {
	b.t.Helper()
	ctx := context.Background()
	if _, err := b.st.EnqueuePublish(ctx, b.task, "app", b.branch, b.commit); err != nil {
		b.t.Fatal(err)
	}
	for _, step := range [][2]store.State{{store.StateQueued, store.StateRunning}, {store.StateRunning, store.StateSucceeded}} {
		if _, err := b.st.SetTaskState(ctx, b.task, []store.State{step[0]}, step[1], nil); err != nil {
			b.t.Fatal(err)
		}
	}
}

func (b *bench) target(mode string) publish.Target {
	return publish.Target{Forge: b.f, Kind: b.kind, Token: b.srv.Token(), PushURL: b.git.URL, GitDir: b.repo,
		Mode: mode, Base: "main", Labels: []string{"reasonix"}, Title: "fix the bug", Body: "the body",
		Result: &store.Result{Summary: "fixed"}}
}

func (b *bench) publisher(owner string, hook func(publish.Point) error) *publish.Publisher {
	b.t.Helper()
	p, err := publish.New(publish.Config{Outbox: b.st, Owner: owner, Lease: time.Minute, Hook: hook, Logger: storetest.Quiet()})
	if err != nil {
		b.t.Fatal(err)
	}
	return p
}

// assertOnce checks the forge holds the branch at the commit and exactly
// one pull request for it, and that the store and the task say so.
func (b *bench) assertOnce() {
	b.t.Helper()
	if got := b.git.Ref(b.t, "refs/heads/"+b.branch); got != b.commit {
		b.t.Errorf("forge branch %s = %q, want %s", b.branch, got, b.commit)
	}
	var prs []forgetest.PullRequest
	for _, pr := range b.srv.PRs() {
		if pr.Head == b.branch {
			prs = append(prs, pr)
		}
	}
	if len(prs) != 1 {
		b.t.Fatalf("pull requests for %s: %+v, want exactly one", b.branch, prs)
	}
	rec, err := b.st.Publish(context.Background(), b.task)
	if err != nil || rec.State != store.PublishDone || rec.PRNumber != prs[0].Number {
		b.t.Errorf("record = %+v, %v; want done with #%d", rec, err, prs[0].Number)
	}
	task, err := b.st.Task(context.Background(), b.task)
	if err != nil || task.Result == nil || task.Result.PR == nil || task.Result.PR.Number != prs[0].Number ||
		task.Result.Publish != "pr" || task.Result.Summary != "fixed" {
		b.t.Errorf("task result = %+v, %v; want pr #%d and the summary kept", task.Result, err, prs[0].Number)
	}
	evs, err := b.st.Events(context.Background(), b.task, 0, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == "published" {
			n++
		}
		if strings.Contains(string(e.Payload), b.srv.Token()) {
			b.t.Errorf("event %s holds the token: %s", e.Type, e.Payload)
		}
	}
	if n != 1 {
		b.t.Errorf("%d published events, want 1", n)
	}
}

func forEachForge(t *testing.T, fn func(t *testing.T, kind forge.Kind)) {
	for _, kind := range []forge.Kind{forge.GitHub, forge.GitLab} {
		t.Run(string(kind), func(t *testing.T) { fn(t, kind) })
	}
}

func TestDrivePushesAndOpensOnePullRequest(t *testing.T) {
	forEachForge(t, func(t *testing.T, kind forge.Kind) {
		b := newBench(t, kind)
		b.succeed()
		out, err := b.publisher("node-a", nil).Drive(t.Context(), b.task, b.target(publish.ModePR))
		if err != nil {
			t.Fatalf("Drive: %v", err)
		}
		if out.PR == nil || out.PR.State != forge.PROpen || out.PR.URL == "" {
			t.Errorf("outcome PR = %+v", out.PR)
		}
		b.assertOnce()
		pr := b.srv.PRs()[0]
		if pr.Title != "fix the bug" || pr.Body != "the body" || pr.Base != "main" || pr.SHA != b.commit ||
			len(pr.Labels) != 1 || pr.Labels[0] != "reasonix" {
			t.Errorf("forge holds %+v", pr)
		}
		// Driving a done record again does nothing.
		if _, err := b.publisher("node-a", nil).Drive(t.Context(), b.task, b.target(publish.ModePR)); !errors.Is(err, store.ErrPublishBusy) {
			t.Errorf("second Drive: %v, want ErrPublishBusy", err)
		}
		b.assertOnce()
	})
}

// A publisher stopped at each labelled point, as a kill -9 there would
// stop it, leaves a record the next publisher (another node, after the
// lease ran out) finishes with exactly one branch and one pull request.
func TestCrashAtEveryPointPublishesOnce(t *testing.T) {
	forEachForge(t, func(t *testing.T, kind forge.Kind) {
		for _, at := range []publish.Point{publish.PointClaimed, publish.PointPushed, publish.PointRecorded, publish.PointOpened} {
			t.Run(string(at), func(t *testing.T) {
				b := newBench(t, kind)
				b.succeed()
				killed := errors.New("killed")
				_, err := b.publisher("node-a", func(p publish.Point) error {
					if p == at {
						return killed
					}
					return nil
				}).Drive(t.Context(), b.task, b.target(publish.ModePR))
				if !errors.Is(err, killed) {
					t.Fatalf("Drive stopped at %s: %v", at, err)
				}
				if at == publish.PointOpened && len(b.srv.PRs()) != 1 {
					t.Fatalf("stopped after opening: forge holds %d PRs", len(b.srv.PRs()))
				}
				// The dead node's lease holds the record until it runs out.
				other := b.publisher("node-b", nil)
				if _, err := other.Drive(t.Context(), b.task, b.target(publish.ModePR)); !errors.Is(err, store.ErrPublishBusy) {
					t.Fatalf("Drive during the lease: %v, want ErrPublishBusy", err)
				}
				b.clock.Add(2 * time.Minute)
				due, err := b.st.DuePublishes(t.Context(), 10)
				if err != nil || len(due) != 1 || due[0] != b.task {
					t.Fatalf("DuePublishes = %v, %v; want the task", due, err)
				}
				if _, err := other.Drive(t.Context(), b.task, b.target(publish.ModePR)); err != nil {
					t.Fatalf("recovery: %v", err)
				}
				b.assertOnce()
			})
		}
	})
}

func TestBranchModePushesWithoutAPullRequest(t *testing.T) {
	b := newBench(t, forge.GitHub)
	b.succeed()
	tg := b.target(publish.ModeBranch)
	tg.Forge = nil
	if _, err := b.publisher("node-a", nil).Drive(t.Context(), b.task, tg); err != nil {
		t.Fatal(err)
	}
	if got := b.git.Ref(t, "refs/heads/"+b.branch); got != b.commit {
		t.Errorf("branch = %q, want %s", got, b.commit)
	}
	task, _ := b.st.Task(t.Context(), b.task)
	if len(b.srv.PRs()) != 0 || task.Result.Publish != "branch" || task.Result.PR != nil {
		t.Errorf("PRs %v, result %+v", b.srv.PRs(), task.Result)
	}
}

// A task continued after its PR was opened publishes its new commit to the
// same branch and keeps the same PR.
func TestContinuedTaskUpdatesTheSamePullRequest(t *testing.T) {
	forEachForge(t, func(t *testing.T, kind forge.Kind) {
		b := newBench(t, kind)
		b.succeed()
		p := b.publisher("node-a", nil)
		if _, err := p.Drive(t.Context(), b.task, b.target(publish.ModePR)); err != nil {
			t.Fatal(err)
		}
		b.run("commit", "--quiet", "--allow-empty", "-m", "more")
		b.commit = b.run("rev-parse", "HEAD")
		if _, err := b.st.Requeue(t.Context(), b.task, []store.State{store.StateSucceeded}); err != nil {
			t.Fatal(err)
		}
		b.succeed()
		out, err := p.Drive(t.Context(), b.task, b.target(publish.ModePR))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.srv.PRs()) != 1 || out.PR == nil || out.PR.SHA != b.commit {
			t.Errorf("forge holds %+v, outcome %+v; want one PR at %s", b.srv.PRs(), out.PR, b.commit)
		}
		if got := b.git.Ref(t, "refs/heads/"+b.branch); got != b.commit {
			t.Errorf("branch = %q, want the new commit %s", got, b.commit)
		}
	})
}

// A push the git server refuses (a wrong token) fails without the token
// in the error, and the record stays for the next attempt.
func TestPushFailureKeepsTheRecordAndHidesTheToken(t *testing.T) {
	b := newBench(t, forge.GitLab)
	b.succeed()
	tg := b.target(publish.ModePR)
	tg.Token = "wrong-token-that-must-not-leak"
	_, err := b.publisher("node-a", nil).Drive(t.Context(), b.task, tg)
	if err == nil || strings.Contains(err.Error(), tg.Token) {
		t.Fatalf("Drive with a wrong token: %v", err)
	}
	rec, _ := b.st.Publish(t.Context(), b.task)
	if rec.State != store.PublishPending || rec.Error == "" || strings.Contains(rec.Error, tg.Token) {
		t.Errorf("record = %+v", rec)
	}
	if len(b.srv.PRs()) != 0 || b.git.Ref(t, "refs/heads/"+b.branch) != "" {
		t.Errorf("a refused push left a branch or a PR")
	}
	for _, r := range b.git.Requests() {
		if strings.Contains(r.URL, tg.Token) || strings.Contains(r.URL, b.srv.Token()) {
			t.Errorf("a token in a URL: %s", r.URL)
		}
	}
}
