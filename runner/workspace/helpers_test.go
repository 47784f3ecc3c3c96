package workspace_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/runner/workspace"
)

// hermeticEnv is an environment with a fresh HOME and no system config, so
// the tests see a machine with no git identity and can check that nothing
// wrote a global config.
func hermeticEnv(t *testing.T) (env []string, home string) {
	t.Helper()
	home = t.TempDir()
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"LC_ALL=C",
	}, home
}

// fixture is a Manager over a temp root plus helpers to build repositories.
type fixture struct {
	t    *testing.T
	env  []string
	home string
	root string
	m    *workspace.Manager
}

func newFixture(t *testing.T, keep bool) *fixture {
	t.Helper()
	env, home := hermeticEnv(t)
	f := &fixture{t: t, env: env, home: home, root: filepath.Join(t.TempDir(), "workspaces")}
	f.m = f.manager(workspace.Config{Keep: keep})
	t.Cleanup(func() {
		for _, p := range []string{".gitconfig", ".config/git/config"} {
			if _, err := os.Stat(filepath.Join(home, p)); err == nil {
				t.Errorf("a global git config %s was written", p)
			}
		}
	})
	return f
}

// manager builds another Manager on the fixture's root (a restart).
func (f *fixture) manager(cfg workspace.Config) *workspace.Manager {
	f.t.Helper()
	cfg.Root, cfg.Env = f.root, f.env
	m, err := workspace.New(cfg)
	if err != nil {
		f.t.Fatalf("New: %v", err)
	}
	return m
}

// git runs git in dir as a test author and returns trimmed stdout.
func (f *fixture) git(dir string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(append([]string(nil), f.env...),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// repo creates a repository on branch main with files committed.
func (f *fixture) repo(files map[string]string) string {
	f.t.Helper()
	dir := filepath.Join(f.t.TempDir(), "repo")
	f.git(f.t.TempDir(), "init", "--quiet", "--initial-branch=main", dir)
	for name, body := range files {
		write(f.t, filepath.Join(dir, name), body)
	}
	f.git(dir, "add", "--all")
	f.git(dir, "commit", "--quiet", "-m", "initial")
	return dir
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
