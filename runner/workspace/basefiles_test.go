package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"reasonix/runner/workspace"
)

// ReadBase reads the base commit, not the working tree and not a task's
// branch, and never follows a symbolic link.
func TestReadBaseReadsTheBaseCommitOnly(t *testing.T) {
	f := newFixture(t, false)
	repo := f.repo(map[string]string{
		".reasonix/commands/review.md":     "base review",
		".reasonix/commands/git/commit.md": "commit",
		"other.md":                         "not asked for",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, ".reasonix/commands/leak.md")); err != nil {
		t.Fatal(err)
	}
	f.git(repo, "add", "--all")
	f.git(repo, "commit", "--quiet", "-m", "link")
	// Uncommitted and other-branch changes must not be seen.
	write(t, filepath.Join(repo, ".reasonix/commands/review.md"), "dirty review")
	f.git(repo, "checkout", "--quiet", "-b", "task")
	write(t, filepath.Join(repo, ".reasonix/commands/evil.md"), "evil")
	f.git(repo, "add", "--all")
	f.git(repo, "commit", "--quiet", "-m", "task change")

	got, err := f.m.ReadBase(testCtx(t), workspace.Spec{Name: "w", Repo: repo, Base: "main"}, ".reasonix/commands", ".reasonix/skills")
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]workspace.BaseFile{}
	for _, bf := range got[".reasonix/commands"] {
		byPath[bf.Path] = bf
	}
	if len(byPath) != 3 || string(byPath["review.md"].Data) != "base review" || string(byPath["git/commit.md"].Data) != "commit" {
		t.Fatalf("files = %+v", got)
	}
	if l := byPath["leak.md"]; l.Skipped == "" || l.Data != nil {
		t.Fatalf("symlink = %+v, want skipped without data", l)
	}
	if len(got[".reasonix/skills"]) != 0 {
		t.Fatalf("skills = %+v, want none", got[".reasonix/skills"])
	}
}
