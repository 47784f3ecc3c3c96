package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"reasonix/runner/workspace"
)

// origin makes a bare repository with one commit on main and returns its
// path and a working clone to push from.
func (f *fixture) origin() (bare, work string) {
	f.t.Helper()
	work = f.repo(map[string]string{"a.txt": "v1\n"})
	bare = filepath.Join(f.t.TempDir(), "origin.git")
	f.git(work, "clone", "--quiet", "--bare", work, bare)
	f.git(work, "remote", "add", "origin", bare)
	return bare, work
}

func TestGitURLIsClonedOnceAndFetchedPerTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	bare, work := f.origin()
	spec := &workspace.Spec{Name: "svc", Repo: "file://" + bare}

	first, err := f.m.Prepare(ctx, "u1", spec)
	if err != nil {
		t.Fatal(err)
	}
	v1 := f.git(bare, "rev-parse", "main")
	if first.Base != v1 || read(t, filepath.Join(first.Dir, "a.txt")) != "v1\n" {
		t.Fatalf("first task: base %s (want %s)", first.Base, v1)
	}
	clone := filepath.Join(f.m.Root(), "repos", "svc")
	marker := filepath.Join(clone, "reasonix-test-marker")
	write(t, marker, "cloned once")

	write(t, filepath.Join(work, "a.txt"), "v2\n")
	f.git(work, "commit", "--quiet", "-am", "v2")
	f.git(work, "push", "--quiet", "origin", "main")
	v2 := f.git(bare, "rev-parse", "main")

	second, err := f.m.Prepare(ctx, "u2", spec)
	if err != nil {
		t.Fatal(err)
	}
	if second.Base != v2 || read(t, filepath.Join(second.Dir, "a.txt")) != "v2\n" {
		t.Errorf("second task: base %s (want the pushed %s)", second.Base, v2)
	}
	if !exists(marker) {
		t.Error("the clone was made again instead of fetched")
	}

	write(t, filepath.Join(second.Dir, "b.txt"), "task\n")
	res, err := f.m.Finish(ctx, second, "add b")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.git(clone, "rev-parse", "reasonix/u2"); got != res.Commit || !res.Changed {
		t.Errorf("clone's task branch = %s, result %+v", got, res)
	}
	if f.git(bare, "branch", "--list", "reasonix/*") != "" {
		t.Error("a task branch reached the origin")
	}
	if _, err := f.m.Finish(ctx, first, "nothing"); err != nil {
		t.Fatal(err)
	}
}

func TestBrokenCloneIsReplaced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	bare, _ := f.origin()
	clone := filepath.Join(f.m.Root(), "repos", "svc")
	write(t, filepath.Join(clone, "junk"), "not a repository")
	ws, err := f.m.Prepare(ctx, "c1", &workspace.Spec{Name: "svc", Repo: "file://" + bare})
	if err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(clone, "junk")) || read(t, filepath.Join(ws.Dir, "a.txt")) != "v1\n" {
		t.Error("the broken clone was not replaced by a real one")
	}
}

func TestConcurrentTasksOnOneRepository(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	bare, _ := f.origin()
	local := f.repo(map[string]string{"a.txt": "a\n"})
	specs := []*workspace.Spec{{Name: "local", Repo: local}, {Name: "remote", Repo: "file://" + bare}}

	const perRepo = 4
	var wg sync.WaitGroup
	errs := make(chan error, perRepo*len(specs))
	for _, spec := range specs {
		for i := range perRepo {
			wg.Go(func() {
				id := fmt.Sprintf("%s-%d", spec.Name, i)
				ws, err := f.m.Prepare(ctx, id, spec)
				if err != nil {
					errs <- fmt.Errorf("prepare %s: %w", id, err)
					return
				}
				if err := os.WriteFile(filepath.Join(ws.Dir, id+".txt"), []byte(id), 0o644); err != nil {
					errs <- err
					return
				}
				res, err := f.m.Finish(ctx, ws, "task "+id)
				if err != nil {
					errs <- fmt.Errorf("finish %s: %w", id, err)
					return
				}
				if !res.Changed || !strings.Contains(res.DiffStat, id+".txt") {
					errs <- fmt.Errorf("task %s result %+v", id, res)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	branches := f.git(local, "branch", "--list", "reasonix/*")
	for i := range perRepo {
		if !strings.Contains(branches, fmt.Sprintf("reasonix/local-%d", i)) {
			t.Errorf("branch reasonix/local-%d missing:\n%s", i, branches)
		}
	}
}

func TestReopeningNeedsNoRemote(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := testCtx(t)
	bare, _ := f.origin()
	spec := &workspace.Spec{Name: "svc", Repo: "file://" + bare}
	ws, err := f.m.Prepare(ctx, "offline", spec)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws.Dir, "work.txt"), "in progress\n")
	if err := os.RemoveAll(bare); err != nil { // the remote is unreachable now
		t.Fatal(err)
	}
	again, err := f.manager(workspace.Config{}).Prepare(ctx, "offline", spec)
	if err != nil {
		t.Fatalf("reopen without the remote: %v", err)
	}
	if !exists(filepath.Join(again.Dir, "work.txt")) {
		t.Error("reopened worktree lost its work")
	}
	if _, err := f.m.Prepare(ctx, "offline-2", spec); err == nil || !strings.Contains(err.Error(), "fetch") {
		t.Errorf("a new task without the remote: %v, want a fetch error", err)
	}
}
