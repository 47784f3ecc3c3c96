package forgetest

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"reasonix/runner/forge"
)

// GitServer is a real git server for pushes and fetches over smart HTTP:
// git's own http-backend run through net/http/cgi, serving one bare
// repository, refusing any request without the token.
type GitServer struct {
	// URL is the repository's URL, "http://127.0.0.1:port/<project>.git".
	URL string
	// Dir is the bare repository on disk.
	Dir   string
	token string
	home  string // HOME for git commands the server runs itself

	mu       sync.Mutex
	requests []Request
	holds    holds
}

// NewGitServer starts a git server for project ("acme/app") with an empty
// bare repository whose default branch is main; it stops with the test.
// Requests must authenticate with token: HTTP basic (any user name, the
// token as password, as git credential helpers send it) or a bearer
// header. It fails the test when git or git-http-backend is missing.
func NewGitServer(t testing.TB, project, token string) *GitServer {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("forgetest: git is required for the git server: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("forgetest: git-http-backend: %v", err)
	}
	root := t.TempDir()
	home := t.TempDir()
	dir := filepath.Join(root, filepath.FromSlash(project)+".git")
	env := GitEnv(home)
	for _, args := range [][]string{
		{"init", "--quiet", "--bare", "--initial-branch=main", dir},
		// No REMOTE_USER reaches the backend, so pushing must be enabled
		// explicitly; the token check in front of it is the access control.
		{"-C", dir, "config", "http.receivepack", "true"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("forgetest: git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	g := &GitServer{Dir: dir, token: token, home: home}
	h := &cgi.Handler{
		Path: backend,
		Dir:  root,
		Env: append([]string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
			slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })...),
		Stderr: testWriter{t},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := g.authorized(r)
		g.mu.Lock()
		g.requests = append(g.requests, Request{Method: r.Method, URL: r.RequestURI, Authorized: ok})
		g.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="forgetest"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		// cgi hands headers to the child as HTTP_* variables; the token
		// has been checked and stays out of the backend's environment.
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
		g.holds.serve(w, r, h)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL + "/" + project + ".git"
	return g
}

func (g *GitServer) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(auth, " ")
	var got string
	switch strings.ToLower(scheme) {
	case "bearer":
		got = cred
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return false
		}
		_, got, _ = strings.Cut(string(raw), ":")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) == 1
}

// Requests returns every request received so far.
func (g *GitServer) Requests() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.requests)
}

// Ref returns the commit ref (e.g. "refs/heads/main") points to in the
// served repository, or "" when there is no such ref.
func (g *GitServer) Ref(t testing.TB, ref string) string {
	t.Helper()
	return g.ref(ref)
}

func (g *GitServer) ref(ref string) string {
	cmd := exec.Command("git", "-C", g.Dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	cmd.Env = GitEnv(g.home)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// mergeable is git's verdict on merging head into base in the served
// repository, as a forge computes it (merge-tree writes only objects).
func (g *GitServer) mergeable(base, head string) forge.Mergeable {
	if base == "" || head == "" {
		return forge.MergeUnknown
	}
	cmd := exec.Command("git", "-C", g.Dir, "merge-tree", "--write-tree", "--no-messages", base, head)
	cmd.Env = GitEnv(g.home)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return forge.MergeClean
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return forge.MergeConflict
	}
	return forge.MergeUnknown
}

// GitEnv is an environment for running git in tests: the caller's PATH,
// home directory home, and no system, global or interactive configuration
// (no prompts, no credential helpers of the machine).
func GitEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=forgetest", "GIT_AUTHOR_EMAIL=forgetest@example.invalid",
		"GIT_COMMITTER_NAME=forgetest", "GIT_COMMITTER_EMAIL=forgetest@example.invalid",
	}
}

// testWriter sends the backend's stderr to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("git-http-backend: %s", strings.TrimSpace(string(p)))
	return len(p), nil
}
