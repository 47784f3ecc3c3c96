package publish_test

import (
	"context"
	"testing"

	"reasonix/runner/internal/publish"
)

// TestRebasedBranchIsPushedWithLease: a published task whose base moved is
// readied to rebase (Rebase fetches the base and remembers the forge's
// branch as the lease); its rebased commit, not a fast-forward, then
// replaces the branch. Once someone else pushed to the branch, the next
// rebased commit is refused and their commit stays.
func TestRebasedBranchIsPushedWithLease(t *testing.T) {
	ctx := context.Background()
	b := newBench(t, "github")
	p := b.publisher("n1", nil)
	b.succeed()
	if _, err := p.Drive(ctx, b.task, b.target(publish.ModePR)); err != nil {
		t.Fatal(err)
	}
	auth := "http.extraHeader=Authorization: Bearer " + b.srv.Token()
	// The base moves on the forge.
	b.run("checkout", "--quiet", "main")
	b.run("commit", "--quiet", "--allow-empty", "-m", "upstream")
	upstream := b.run("rev-parse", "HEAD")
	b.run("-c", auth, "push", "--quiet", b.git.URL, "main")
	b.run("checkout", "--quiet", b.branch)

	rebase := func() {
		t.Helper()
		rec, err := b.st.Publish(ctx, b.task)
		if err != nil {
			t.Fatal(err)
		}
		c, err := p.Rebase(ctx, b.target(publish.ModePR), rec)
		if err != nil || c.Base != upstream || len(c.Files) != 0 {
			t.Fatalf("Rebase = %+v, %v; want base %s, no conflicts", c, err, upstream)
		}
	}
	// The continued task ends again with a new commit, as the runner
	// records it.
	again := func() {
		t.Helper()
		b.commit = b.run("rev-parse", "HEAD")
		if _, err := b.st.EnqueuePublish(ctx, b.task, "app", b.branch, b.commit); err != nil {
			t.Fatal(err)
		}
	}
	rebase()
	b.run("rebase", "--quiet", upstream)
	again()
	out, err := p.Drive(ctx, b.task, b.target(publish.ModePR))
	if err != nil {
		t.Fatalf("drive of the rebased commit: %v", err)
	}
	if got := b.git.Ref(t, "refs/heads/"+b.branch); got != b.commit {
		t.Fatalf("the forge's branch = %s, want the rebased %s", got, b.commit)
	}
	if out.Conflict == nil || len(out.Conflict.Files) != 0 || len(b.srv.PRs()) != 1 {
		t.Fatalf("after the rebase: conflict %+v, %d pull requests", out.Conflict, len(b.srv.PRs()))
	}

	// Someone else pushes to the task's branch; a rebase after that may
	// not replace their commit.
	rebase()
	b.run("commit", "--quiet", "--allow-empty", "-m", "a colleague's fix")
	theirs := b.run("rev-parse", "HEAD")
	b.run("-c", auth, "push", "--quiet", b.git.URL, "HEAD:refs/heads/"+b.branch)
	b.run("reset", "--quiet", "--hard", "HEAD~1")
	b.run("commit", "--quiet", "--allow-empty", "--amend", "-m", "the fix, reworded")
	again()
	if _, err := p.Drive(ctx, b.task, b.target(publish.ModePR)); err == nil {
		t.Fatal("a push over a colleague's commit went through")
	}
	if got := b.git.Ref(t, "refs/heads/"+b.branch); got != theirs {
		t.Fatalf("the forge's branch = %s, want the colleague's %s kept", got, theirs)
	}
}
