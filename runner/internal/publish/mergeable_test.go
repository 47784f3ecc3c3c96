package publish_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
	"reasonix/runner/internal/publish"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// conflicting makes the task's commit conflict with the forge's main:
// both change the same line of README.md.
func (b *bench) conflicting() {
	b.t.Helper()
	write := func(content string) {
		b.t.Helper()
		if err := os.WriteFile(filepath.Join(b.repo, "README.md"), []byte(content), 0o644); err != nil {
			b.t.Fatal(err)
		}
		b.run("add", "README.md")
	}
	b.run("checkout", "--quiet", "main")
	write("theirs\n")
	b.run("commit", "--quiet", "-m", "theirs")
	b.run("-c", "http.extraHeader=Authorization: Bearer "+b.srv.Token(), "push", "--quiet", b.git.URL, "main")
	b.run("checkout", "--quiet", b.branch)
	write("ours\n")
	b.run("commit", "--quiet", "-m", "ours")
	b.commit = b.run("rev-parse", "HEAD")
}

// existingPR puts the task's pull request on the forge with the verdict
// the forge gives on it, and returns its number.
func (b *bench) existingPR(m forge.Mergeable) int {
	n := b.srv.AddPR(forgetest.PullRequest{Title: "fix the bug", Head: b.branch, Base: "main"})
	b.srv.SetMergeable(n, m)
	return n
}

func (b *bench) result() *store.Result {
	b.t.Helper()
	task, err := b.st.Task(context.Background(), b.task)
	if err != nil || task.Result == nil || task.Result.PR == nil {
		b.t.Fatalf("task = %+v, %v; want a pull request in its result", task, err)
	}
	return task.Result
}

// The forge's own verdict on merging decides over git's check here: a
// request the forge calls mergeable records no conflict (and a
// continuation is told of none), one it calls conflicting records the
// conflict even when git's check could not run, and a forge that is
// still computing when the bound runs out leaves git's check to decide.
func TestForgeMergeabilityDecides(t *testing.T) {
	forEachForge(t, func(t *testing.T, kind forge.Kind) {
		ctx := t.Context()
		t.Run("clean over git's conflict", func(t *testing.T) {
			b := newBench(t, kind)
			b.conflicting()
			b.succeed()
			b.existingPR(forge.MergeClean)
			p := b.publisher("n1", nil)
			out, err := p.Drive(ctx, b.task, b.target(publish.ModePR))
			if err != nil {
				t.Fatal(err)
			}
			if c := out.Conflict; c == nil || c.Forge != forge.MergeClean || !slices.Equal(c.Files, []string{"README.md"}) || c.Conflicting() {
				t.Fatalf("conflict = %+v, want git's README.md overruled by the forge's clean", c)
			}
			if pr := b.result().PR; pr.Mergeable != "clean" || len(pr.Conflicts) != 0 || pr.BaseCommit != "" {
				t.Errorf("result.pr = %+v, want mergeable clean and no conflicts", pr)
			}
			rec, err := b.st.Publish(ctx, b.task)
			if err != nil {
				t.Fatal(err)
			}
			c, err := p.Rebase(ctx, b.target(publish.ModePR), rec)
			if err != nil || c.Forge != forge.MergeClean || c.Conflicting() {
				t.Errorf("Rebase = %+v, %v; want the forge's clean, so no conflict to tell", c, err)
			}
		})
		t.Run("conflict where git could not check", func(t *testing.T) {
			b := newBench(t, kind)
			b.succeed()
			b.existingPR(forge.MergeConflict)
			target := b.target(publish.ModePR)
			target.Base = "no-such-branch" // git's check fails: nothing to fetch
			out, err := b.publisher("n1", nil).Drive(ctx, b.task, target)
			if err != nil {
				t.Fatal(err)
			}
			if c := out.Conflict; c == nil || c.Forge != forge.MergeConflict || !c.Conflicting() {
				t.Fatalf("conflict = %+v, want the forge's conflict", c)
			}
			if pr := b.result().PR; pr.Mergeable != "conflict" || len(pr.Conflicts) != 0 {
				t.Errorf("result.pr = %+v, want mergeable conflict (no files known)", pr)
			}
			evs, err := b.st.Events(ctx, b.task, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if last := evs[len(evs)-1]; last.Type != "published" || !strings.Contains(string(last.Payload), `"mergeable":"conflict"`) {
				t.Errorf("last event %s %s, want published with the forge's conflict", last.Type, last.Payload)
			}
			// A continuation asks again: git finds nothing, the forge
			// still says conflict, and that is what counts.
			rec, err := b.st.Publish(ctx, b.task)
			if err != nil {
				t.Fatal(err)
			}
			c, err := b.publisher("n1", nil).Rebase(ctx, b.target(publish.ModePR), rec)
			if err != nil || len(c.Files) != 0 || !c.Conflicting() {
				t.Errorf("Rebase = %+v, %v; want the forge's conflict without files", c, err)
			}
		})
		t.Run("unknown past the bound", func(t *testing.T) {
			b := newBench(t, kind)
			b.conflicting()
			b.succeed()
			n := b.existingPR(forge.MergeUnknown) // never finishes computing
			p, err := publish.New(publish.Config{Outbox: b.st, Owner: "n1", Lease: time.Minute, Logger: storetest.Quiet(),
				MergeWait: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Drive(ctx, b.task, b.target(publish.ModePR))
			if err != nil {
				t.Fatal(err)
			}
			if c := out.Conflict; c == nil || c.Forge != forge.MergeUnknown || !c.Conflicting() {
				t.Fatalf("conflict = %+v, want git's verdict with the forge unknown", c)
			}
			if pr := b.result().PR; pr.Mergeable != "unknown" || !slices.Equal(pr.Conflicts, []string{"README.md"}) {
				t.Errorf("result.pr = %+v, want mergeable unknown and git's README.md", pr)
			}
			reads := 0
			for _, r := range b.srv.Requests() {
				path, _, _ := strings.Cut(r.URL, "?")
				if r.Method == "GET" && (strings.HasSuffix(path, "/pulls/1") || strings.HasSuffix(path, "/merge_requests/1")) {
					reads++
				}
			}
			if n != 1 || reads < 2 || reads > 6 {
				t.Errorf("the forge was read %d times for #%d, want it asked again within the bound, a few times", reads, n)
			}
		})
	})
}
