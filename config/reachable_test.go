package config

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newRepo makes a git repository with one commit on branch main.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "--allow-empty", "-m", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestWorkspaceCheckReachable(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := newRepo(t)
	ctx := context.Background()
	cases := []struct {
		name string
		ws   Workspace
		want string // "" = reachable
	}{
		{"local main", Workspace{Name: "app", Repo: repo, Base: "main"}, ""},
		{"missing path", Workspace{Name: "app", Repo: filepath.Join(repo, "nope"), Base: "main"}, `workspace "app": repo ` + filepath.Join(repo, "nope") + " does not exist"},
		{"not a repo", Workspace{Name: "docs", Repo: t.TempDir(), Base: "main"}, `workspace "docs": repo`},
		{"missing base", Workspace{Name: "app", Repo: repo, Base: "release"}, `workspace "app": base "release" is not a branch`},
		{"remote main", Workspace{Name: "svc", Repo: "file://" + repo, Base: "main"}, ""},
		{"remote missing base", Workspace{Name: "svc", Repo: "file://" + repo, Base: "trunk"}, `workspace "svc": base "trunk" is not a branch or tag`},
		{"remote unreachable", Workspace{Name: "svc", Repo: "file://" + filepath.Join(repo, "gone"), Base: "main"}, `workspace "svc": repo file://`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.ws.CheckReachable(ctx)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("CheckReachable: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("CheckReachable = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestRedactURLDropsCredentials(t *testing.T) {
	got := redactURL("https://user:s3cret@example.com/x.git")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "example.com/x.git") {
		t.Errorf("redactURL = %q", got)
	}
}
