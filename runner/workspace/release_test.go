package workspace_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"reasonix/runner/workspace"
)

// otherNode is a Manager with its own root (another machine's data dir)
// and the fixture's git environment.
func (f *fixture) otherNode() *workspace.Manager {
	f.t.Helper()
	m, err := workspace.New(workspace.Config{Root: filepath.Join(f.t.TempDir(), "node-b"), Env: f.env})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// A task released on one node continues on another with the first node's
// uncommitted changes, for a repository both reach by path and for a URL
// (through a checkpoint pushed to the remote); a second move carries the
// second node's changes back.
func TestReleaseCarriesChangesToAnotherNode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	bare, _ := f.origin()
	specs := map[string]*workspace.Spec{
		"path": {Name: "local", Repo: f.repo(map[string]string{"a.txt": "v1\n"})},
		"url":  {Name: "remote", Repo: "file://" + bare},
	}
	b := f.otherNode()
	for kind, spec := range specs {
		id := "move-" + kind
		wa, err := f.m.Prepare(ctx, id, spec)
		if err != nil {
			t.Fatal(kind, err)
		}
		write(t, filepath.Join(wa.Dir, "from-a.txt"), "a\n")
		if err := f.m.Release(ctx, wa, ""); err != nil {
			t.Fatal(kind, err)
		}
		if exists(wa.Dir) {
			t.Errorf("%s: the released worktree is still there", kind)
		}
		wb, err := b.Prepare(ctx, id, spec)
		if err != nil {
			t.Fatal(kind, err)
		}
		if got := read(t, filepath.Join(wb.Dir, "from-a.txt")); got != "a\n" {
			t.Fatalf("%s: node B sees %q", kind, got)
		}
		if wb.Base != wa.Base {
			t.Errorf("%s: base moved from %s to %s", kind, wa.Base, wb.Base)
		}
		write(t, filepath.Join(wb.Dir, "from-b.txt"), "b\n")
		if err := b.Release(ctx, wb, ""); err != nil {
			t.Fatal(kind, err)
		}
		again, err := f.m.Prepare(ctx, id, spec)
		if err != nil {
			t.Fatal(kind, err)
		}
		if read(t, filepath.Join(again.Dir, "from-a.txt")) != "a\n" || read(t, filepath.Join(again.Dir, "from-b.txt")) != "b\n" {
			t.Fatalf("%s: back on node A the changes are not all there", kind)
		}
		res, err := f.m.Finish(ctx, again, "done")
		if err != nil || !res.Changed {
			t.Fatalf("%s: finish %+v %v", kind, res, err)
		}
	}
}

// A node that died with the task branch checked out does not keep another
// node from continuing the task from its last checkpoint.
func TestPrepareTakesOverABranchADeadNodeHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	spec := &workspace.Spec{Name: "local", Repo: f.repo(map[string]string{"a.txt": "v1\n"})}
	wa, err := f.m.Prepare(ctx, "dead", spec)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(wa.Dir, "lost.txt"), "never checkpointed\n")
	wb, err := f.otherNode().Prepare(ctx, "dead", spec)
	if err != nil {
		t.Fatalf("taking over a branch a dead node holds: %v", err)
	}
	if read(t, filepath.Join(wb.Dir, "a.txt")) != "v1\n" {
		t.Fatal("wrong checkout")
	}
	// The dead node's uncommitted change did not come along, and the
	// workspace says so: the runner tells the model which calls are lost.
	if exists(filepath.Join(wb.Dir, "lost.txt")) || !wb.Fresh {
		t.Errorf("the take-over's worktree: lost.txt there %v, Fresh %v; want not there, Fresh", exists(filepath.Join(wb.Dir, "lost.txt")), wb.Fresh)
	}
}

// BenchmarkHandOver measures what moving a task costs its workspace: the
// checkpoint and removal on the node that stops (Release) and the new
// worktree on the node that continues (Prepare), for a repository both
// nodes reach by path, with one changed file.
func BenchmarkHandOver(b *testing.B) {
	home := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	repo := b.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "start"}} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	spec := &workspace.Spec{Name: "bench", Repo: repo}
	nodes := make([]*workspace.Manager, 2)
	for i := range nodes {
		m, err := workspace.New(workspace.Config{Root: b.TempDir(), Env: env})
		if err != nil {
			b.Fatal(err)
		}
		nodes[i] = m
	}
	ctx := context.Background()
	var release, prepare time.Duration
	n := 0
	for b.Loop() {
		id := fmt.Sprintf("bench%d", n)
		ws, err := nodes[0].Prepare(ctx, id, spec)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws.Dir, "change.txt"), []byte("changed\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := nodes[0].Release(ctx, ws, ""); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := nodes[1].Prepare(ctx, id, spec); err != nil {
			b.Fatal(err)
		}
		release, prepare = release+t1.Sub(t0), prepare+time.Since(t1)
		n++
	}
	b.ReportMetric(float64(release.Microseconds())/1000/float64(n), "ms-release")
	b.ReportMetric(float64(prepare.Microseconds())/1000/float64(n), "ms-prepare-on-next-node")
}
