package forge_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
)

// With the fake forge linked to a real git server, a pull request needs
// its branch pushed first and follows later pushes to it: the order
// publishing must keep.
func TestOpenPRNeedsThePushedBranch(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		g := forgetest.NewGitServer(t, h.srv.Project(), h.srv.Token())
		h.srv.UseGit(g)
		in := forge.PR{Title: "t", Head: "reasonix/t1", Base: "main"}
		_, err := h.f.OpenPR(t.Context(), in)
		var ae *forge.APIError
		if !errors.As(err, &ae) || ae.Status != 422 || errors.Is(err, forge.ErrExists) {
			t.Fatalf("OpenPR before the push: %v, want a 422 validation error", err)
		}

		dir := t.TempDir()
		run := func(args ...string) string {
			t.Helper()
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = forgetest.GitEnv(t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			return strings.TrimSpace(string(out))
		}
		auth := "http.extraHeader=Authorization: Bearer " + h.srv.Token()
		run("init", "--quiet", "--initial-branch=main")
		run("commit", "--quiet", "--allow-empty", "-m", "one")
		run("-c", auth, "push", "--quiet", g.URL, "HEAD:refs/heads/reasonix/t1")

		pr, err := h.f.OpenPR(t.Context(), in)
		if err != nil {
			t.Fatalf("OpenPR after the push: %v", err)
		}
		if want := run("rev-parse", "HEAD"); pr.SHA != want {
			t.Errorf("PR head = %q, want the pushed %s", pr.SHA, want)
		}
		run("commit", "--quiet", "--allow-empty", "-m", "two")
		run("-c", auth, "push", "--quiet", g.URL, "HEAD:refs/heads/reasonix/t1")
		found, ok, err := h.f.FindPR(t.Context(), "reasonix/t1")
		if want := run("rev-parse", "HEAD"); err != nil || !ok || found.SHA != want || found.Number != pr.Number {
			t.Errorf("FindPR after a second push = %+v, %v, %v; want #%d at %s", found, ok, err, pr.Number, want)
		}
	})
}

// The forge's mergeability: unknown while it computes (the first read
// after the head or base moved), then git's verdict on the pushed
// branches; it follows a push that moves the base into a conflict.
func TestGetPRReadsTheForgesMergeability(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		g := forgetest.NewGitServer(t, h.srv.Project(), h.srv.Token())
		h.srv.UseGit(g)
		dir := t.TempDir()
		run := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = forgetest.GitEnv(t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		write := func(content string) {
			t.Helper()
			if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		auth := "http.extraHeader=Authorization: Bearer " + h.srv.Token()
		run("init", "--quiet", "--initial-branch=main")
		write("one\n")
		run("add", "README.md")
		run("commit", "--quiet", "-m", "base")
		run("-c", auth, "push", "--quiet", g.URL, "main")
		run("checkout", "--quiet", "-b", "reasonix/t1")
		write("task\n")
		run("commit", "--quiet", "-am", "task")
		run("-c", auth, "push", "--quiet", g.URL, "reasonix/t1")
		pr, err := h.f.OpenPR(t.Context(), forge.PR{Title: "t", Head: "reasonix/t1", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Mergeable != "" {
			t.Errorf("OpenPR says Mergeable %q; only GetPR reads it", pr.Mergeable)
		}
		read := func() forge.PullRequest {
			t.Helper()
			got, err := h.f.GetPR(t.Context(), pr.Number)
			if err != nil {
				t.Fatalf("GetPR: %v", err)
			}
			if got.Number != pr.Number || got.URL != pr.URL || got.State != forge.PROpen || got.Head != "reasonix/t1" || got.Base != "main" {
				t.Errorf("GetPR = %+v, want #%d open", got, pr.Number)
			}
			return got
		}
		if got := read(); got.Mergeable != forge.MergeUnknown {
			t.Errorf("first read: Mergeable %q, want unknown (still computing)", got.Mergeable)
		}
		if got := read(); got.Mergeable != forge.MergeClean {
			t.Errorf("second read: Mergeable %q, want clean", got.Mergeable)
		}
		// Someone else's change to the same line lands on the base.
		run("checkout", "--quiet", "main")
		write("theirs\n")
		run("commit", "--quiet", "-am", "theirs")
		run("-c", auth, "push", "--quiet", g.URL, "main")
		if got := read(); got.Mergeable != forge.MergeUnknown {
			t.Errorf("first read after the base moved: Mergeable %q, want unknown", got.Mergeable)
		}
		if got := read(); got.Mergeable != forge.MergeConflict {
			t.Errorf("after the base moved: Mergeable %q, want conflict", got.Mergeable)
		}
		if _, err := h.f.GetPR(t.Context(), pr.Number+1); !errors.Is(err, forge.ErrNotFound) {
			t.Errorf("GetPR of a missing request: %v, want ErrNotFound", err)
		}
	})
}

// What a test fixes with SetMergeable is the answer, after the forge's
// computing; MergeUnknown keeps it computing forever.
func TestGetPRSetMergeable(t *testing.T) {
	forEach(t, forgetest.Options{MergeableAfter: -1}, func(t *testing.T, h harness) {
		n := h.srv.AddPR(forgetest.PullRequest{Title: "t", Head: "reasonix/t1", Base: "main"})
		for _, want := range []forge.Mergeable{forge.MergeClean, forge.MergeConflict, forge.MergeUnknown, forge.MergeClean} {
			h.srv.SetMergeable(n, want)
			got, err := h.f.GetPR(t.Context(), n)
			if err != nil || got.Mergeable != want {
				t.Errorf("GetPR after SetMergeable(%q) = %q, %v", want, got.Mergeable, err)
			}
		}
		if h.kind == forge.GitLab {
			var rechecked bool
			for _, r := range h.srv.Requests() {
				rechecked = rechecked || strings.Contains(r.URL, "/merge_requests/1?with_merge_status_recheck=true")
			}
			if !rechecked {
				t.Error("GetPR did not ask GitLab to compute the merge status (with_merge_status_recheck)")
			}
		}
	})
}
