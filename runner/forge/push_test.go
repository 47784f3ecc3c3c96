package forge_test

import (
	"errors"
	"os/exec"
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
