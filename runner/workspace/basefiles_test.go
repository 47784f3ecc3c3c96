package workspace_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// BenchmarkReadBase500 reads 500 command files from a base commit, the
// service's path for a task that names a command. Warm: the commit was
// read before, so only the base is resolved again (two rev-parse).
func BenchmarkReadBase500(b *testing.B) { benchReadBase(b, false) }

// BenchmarkReadBase500Cold is the first read of a commit: ls-tree and one
// cat-file --batch on top (loose objects, the slow case).
func BenchmarkReadBase500Cold(b *testing.B) { benchReadBase(b, true) }

func benchReadBase(b *testing.B, cold bool) {
	dir := b.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	for i := range 500 {
		p := filepath.Join(dir, ".reasonix", "commands", fmt.Sprintf("ns%d", i%10), fmt.Sprintf("c%d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "---\ndescription: c%d\n---\nDo $ARGUMENTS.\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run("add", "--all")
	run("commit", "-q", "-m", "root")
	m, err := workspace.New(workspace.Config{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	spec := workspace.Spec{Name: "w", Repo: dir, Base: "main"}
	b.ResetTimer()
	for b.Loop() {
		if cold {
			b.StopTimer()
			if m, err = workspace.New(workspace.Config{Root: b.TempDir()}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		got, err := m.ReadBase(b.Context(), spec, ".reasonix/commands")
		if err != nil || len(got[".reasonix/commands"]) != 500 {
			b.Fatalf("%d files, %v", len(got[".reasonix/commands"]), err)
		}
	}
}

// A file over the limit is skipped unread; a new commit on the base is
// seen at once (what ReadBase remembers is keyed by commit).
func TestReadBaseLimitsAndFollowsTheBase(t *testing.T) {
	f := newFixture(t, false)
	repo := f.repo(map[string]string{
		".reasonix/commands/big.md":    strings.Repeat("x", 64<<10+1),
		".reasonix/commands/review.md": "v1",
	})
	spec := workspace.Spec{Name: "w", Repo: repo, Base: "main"}
	read := func() map[string]workspace.BaseFile {
		got, err := f.m.ReadBase(testCtx(t), spec, ".reasonix/commands")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]workspace.BaseFile{}
		for _, bf := range got[".reasonix/commands"] {
			out[bf.Path] = bf
		}
		return out
	}
	first := read()
	if b := first["big.md"]; b.Skipped == "" || b.Data != nil || string(first["review.md"].Data) != "v1" {
		t.Fatalf("first read = %+v", first)
	}
	if again := read(); string(again["review.md"].Data) != "v1" {
		t.Fatalf("second read = %+v", again)
	}
	write(t, filepath.Join(repo, ".reasonix/commands/review.md"), "v2")
	f.git(repo, "commit", "--quiet", "-am", "v2")
	if after := read(); string(after["review.md"].Data) != "v2" {
		t.Fatalf("after a new base commit = %q", after["review.md"].Data)
	}
}

// ReadBaseAt reads the commit it is given even after the base branch
// moved on, and refuses a name that is not a full commit name.
func TestReadBaseAtReadsTheRecordedCommit(t *testing.T) {
	f := newFixture(t, false)
	repo := f.repo(map[string]string{".reasonix/skills/review/SKILL.md": "first"})
	first := strings.TrimSpace(f.git(repo, "rev-parse", "HEAD"))
	write(t, filepath.Join(repo, ".reasonix/skills/review/SKILL.md"), "second")
	f.git(repo, "commit", "--quiet", "-am", "move on")
	spec := workspace.Spec{Name: "w", Repo: repo, Base: "main"}
	at, err := f.m.ReadBaseAt(testCtx(t), spec, first, ".reasonix/skills")
	if err != nil {
		t.Fatal(err)
	}
	now, err := f.m.ReadBase(testCtx(t), spec, ".reasonix/skills")
	if err != nil {
		t.Fatal(err)
	}
	if len(at[".reasonix/skills"]) != 1 || string(at[".reasonix/skills"][0].Data) != "first" || string(now[".reasonix/skills"][0].Data) != "second" {
		t.Fatalf("at %s: %+v; base: %+v", first, at, now)
	}
	for _, bad := range []string{"main", "HEAD", first[:12], "--output=x"} {
		if _, err := f.m.ReadBaseAt(testCtx(t), spec, bad, ".reasonix/skills"); err == nil {
			t.Errorf("ReadBaseAt(%q) read something", bad)
		}
	}
}

// BenchmarkReadBaseAt50 reads 50 skills at a recorded commit, what a
// task's start adds for its skills. Warm: the commit was read before (a
// resume, or another task from the same base) and no git runs.
func BenchmarkReadBaseAt50(b *testing.B) { benchReadBaseAt(b, false) }

// BenchmarkReadBaseAt50Cold is the first read of a commit.
func BenchmarkReadBaseAt50Cold(b *testing.B) { benchReadBaseAt(b, true) }

func benchReadBaseAt(b *testing.B, cold bool) {
	dir := b.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	for i := range 50 {
		p := filepath.Join(dir, ".reasonix", "skills", fmt.Sprintf("s%d", i), "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "---\ndescription: skill %d does one job\n---\n%s\n", i, strings.Repeat("Step. ", 300)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run("add", "--all")
	run("commit", "-q", "-m", "root")
	commit := run("rev-parse", "HEAD")
	m, err := workspace.New(workspace.Config{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	spec := workspace.Spec{Name: "w", Repo: dir, Base: "main"}
	if !cold {
		if _, err := m.ReadBaseAt(b.Context(), spec, commit, ".reasonix/skills"); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if cold {
			b.StopTimer()
			if m, err = workspace.New(workspace.Config{Root: b.TempDir()}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		got, err := m.ReadBaseAt(b.Context(), spec, commit, ".reasonix/skills")
		if err != nil || len(got[".reasonix/skills"]) != 50 {
			b.Fatalf("%d files, %v", len(got[".reasonix/skills"]), err)
		}
	}
}
