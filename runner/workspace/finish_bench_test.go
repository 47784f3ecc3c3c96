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

// BenchmarkFinish measures finishing a task's worktree — the checks of its
// git links, staging, the commit, the diff stat and the removal — for a
// repository of 200 files with three changed, one deleted and two new.
// The ms/finish metric excludes Prepare and the edits. In "task-commit"
// the task committed one more change itself (to its own object directory
// where it has one), so Finish also imports its objects.
func BenchmarkFinish(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchFinish(b, false) })
	b.Run("task-commit", func(b *testing.B) { benchFinish(b, true) })
}

func benchFinish(b *testing.B, taskCommits bool) {
	home := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	repo := b.TempDir()
	for i := range 200 {
		p := filepath.Join(repo, fmt.Sprintf("pkg%d", i%10), fmt.Sprintf("f%d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package p\n\nconst x%d = %d\n", i, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "--all"}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "start"}} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	spec := &workspace.Spec{Name: "bench", Repo: repo}
	m, err := workspace.New(workspace.Config{Root: b.TempDir(), Env: env})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var total time.Duration
	n := 0
	for b.Loop() {
		ws, err := m.Prepare(ctx, fmt.Sprintf("bench%d", n), spec)
		if err != nil {
			b.Fatal(err)
		}
		for i, name := range []string{"pkg1/f1.go", "pkg2/f2.go", "pkg3/f3.go", "new/a.go", "new/b.go"} {
			if err := os.WriteFile(filepath.Join(ws.Dir, name), []byte(fmt.Sprint("changed ", i, "\n")), 0o644); err != nil && !os.IsNotExist(err) {
				b.Fatal(err)
			}
			if i == 2 {
				if err := os.MkdirAll(filepath.Join(ws.Dir, "new"), 0o755); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := os.Remove(filepath.Join(ws.Dir, "pkg4/f4.go")); err != nil {
			b.Fatal(err)
		}
		if taskCommits {
			task := append(append([]string(nil), env...), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
			if own := filepath.Join(repo, ".git", "worktrees", filepath.Base(ws.Dir), "objects"); dirExists(own) {
				task = append(task, "GIT_OBJECT_DIRECTORY="+own, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(repo, ".git", "objects"))
			}
			cmd := exec.Command("git", "-C", ws.Dir, "commit", "-qam", "task")
			cmd.Env = task
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("the task's commit: %v\n%s", err, out)
			}
		}
		t0 := time.Now()
		res, err := m.Finish(ctx, ws, "bench")
		total += time.Since(t0)
		if err != nil || !res.Changed {
			b.Fatalf("Finish = %+v, %v", res, err)
		}
		n++
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(n), "ms/finish")
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
