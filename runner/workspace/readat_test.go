package workspace_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/runner/workspace"
)

// ReadAt reads the named files at the recorded commit: never the working
// tree, never a later commit of the branch; a missing file is left out
// and a symbolic link is not followed.
func TestReadAtReadsTheCommitOnly(t *testing.T) {
	f := newFixture(t, false)
	repo := f.repo(map[string]string{
		"AGENTS.md":     "root rule",
		"pkg/AGENTS.md": "pkg rule",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, "pkg/CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	f.git(repo, "add", "--all")
	f.git(repo, "commit", "--quiet", "-m", "link")
	base := f.git(repo, "rev-parse", "HEAD")
	write(t, filepath.Join(repo, "AGENTS.md"), "dirty rule")
	write(t, filepath.Join(repo, "REASONIX.md"), "uncommitted")
	f.git(repo, "add", "--all")
	f.git(repo, "commit", "--quiet", "-m", "later")

	spec := workspace.Spec{Name: "w", Repo: repo, Base: "main"}
	paths := []string{"AGENTS.md", "REASONIX.md", "pkg/AGENTS.md", "pkg/CLAUDE.md", "none/AGENTS.md"}
	for range 2 { // the second read is the cached one
		got, err := f.m.ReadAt(testCtx(t), spec, base, paths...)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].Path != "AGENTS.md" || string(got[0].Data) != "root rule" ||
			got[1].Path != "pkg/AGENTS.md" || string(got[1].Data) != "pkg rule" ||
			got[2].Path != "pkg/CLAUDE.md" || got[2].Skipped == "" || got[2].Data != nil {
			t.Fatalf("files = %+v", got)
		}
	}
	for _, bad := range [][]string{{"../x"}, {"/etc/passwd"}, {"a/../b"}, {""}} {
		if _, err := f.m.ReadAt(testCtx(t), spec, base, bad...); err == nil {
			t.Errorf("ReadAt(%q) = nil error", bad)
		}
	}
	if _, err := f.m.ReadAt(testCtx(t), spec, "main", "AGENTS.md"); err == nil {
		t.Error("ReadAt of a ref name, not a commit name, succeeded")
	}
}

// BenchmarkReadAtCached is what instruction files add to a task's start
// once its base commit was read: a cache hit, no git.
func BenchmarkReadAtCached(b *testing.B) {
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}} {
		gitB(b, dir, args...)
	}
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("rule"), 0o644); err != nil {
		b.Fatal(err)
	}
	gitB(b, dir, "add", "--all")
	gitB(b, dir, "commit", "-q", "-m", "root")
	sha := gitB(b, dir, "rev-parse", "HEAD")
	m, err := workspace.New(workspace.Config{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	spec := workspace.Spec{Name: "w", Repo: dir, Base: "main"}
	for b.Loop() {
		got, err := m.ReadAt(b.Context(), spec, sha, "REASONIX.md", "AGENTS.md", "CLAUDE.md")
		if err != nil || len(got) != 1 {
			b.Fatalf("%v, %v", got, err)
		}
	}
}

func gitB(b *testing.B, dir string, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
