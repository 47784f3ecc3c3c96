package forgetest_test

import (
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"reasonix/runner/forge/forgetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "git-token-0123456789"

// git runs git in dir with a clean environment and returns its output.
func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = forgetest.GitEnv(t.TempDir())
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// A local repository with one commit; returns its directory and the commit.
func localRepo(t *testing.T) (string, string) {
	dir := t.TempDir()
	mustGit(t, dir, "init", "--quiet", "--initial-branch=main")
	mustGit(t, dir, "commit", "--quiet", "--allow-empty", "-m", "first")
	return dir, mustGit(t, dir, "rev-parse", "HEAD")
}

func TestGitServerAcceptsPushesWithTheToken(t *testing.T) {
	srv := forgetest.NewGitServer(t, "acme/app", token)
	dir, head := localRepo(t)
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	for ref, header := range map[string]string{
		"refs/heads/reasonix/bearer": "Authorization: Bearer " + token,
		"refs/heads/reasonix/basic":  "Authorization: Basic " + basic,
	} {
		mustGit(t, dir, "-c", "http.extraHeader="+header, "push", "--quiet", srv.URL, "HEAD:"+ref)
		if got := srv.Ref(t, ref); got != head {
			t.Errorf("%s = %q after the push, want %s", ref, got, head)
		}
	}
	// And it serves fetches the same way.
	clone := t.TempDir()
	mustGit(t, clone, "-c", "http.extraHeader=Authorization: Bearer "+token, "clone", "--quiet",
		"--branch", "reasonix/bearer", srv.URL, "repo")
	if got := mustGit(t, clone+"/repo", "rev-parse", "HEAD"); got != head {
		t.Errorf("cloned HEAD = %s, want %s", got, head)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(r.URL, token) {
			t.Errorf("the token is in a URL: %s", r.URL)
		}
	}
}

func TestGitServerRefusesPushesWithoutTheToken(t *testing.T) {
	srv := forgetest.NewGitServer(t, "acme/app", token)
	dir, _ := localRepo(t)
	for name, args := range map[string][]string{
		"no token":    {"push", "--quiet", srv.URL, "HEAD:refs/heads/x"},
		"wrong token": {"-c", "http.extraHeader=Authorization: Bearer nope-0123456789", "push", "--quiet", srv.URL, "HEAD:refs/heads/x"},
		"wrong basic": {"-c", "http.extraHeader=Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(token+":x")),
			"push", "--quiet", srv.URL, "HEAD:refs/heads/x"},
	} {
		if out, err := git(t, dir, args...); err == nil {
			t.Errorf("%s: push succeeded: %s", name, out)
		}
		if got := srv.Ref(t, "refs/heads/x"); got != "" {
			t.Fatalf("%s: refs/heads/x = %s, want no ref", name, got)
		}
	}
	if len(srv.Requests()) == 0 || srv.Requests()[0].Authorized {
		t.Errorf("requests = %+v, want refused ones recorded", srv.Requests())
	}
}
