// Package forgetest is the test kit of package forge: a fake GitHub or
// GitLab REST server on loopback that speaks the subset forge uses with
// the real APIs' JSON field names, holds state a test sets (checks per
// commit, permissions, existing pull requests) and records what it was
// asked; and GitServer, a real git server for pushes (git http-backend
// behind net/http/cgi) that checks the token.
//
// Import it only from tests (and cmd/reasonix's test wiring).
package forgetest

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"reasonix/runner/forge"
)

// Options configure a Server. Zero fields take the defaults noted.
type Options struct {
	Project string // "acme/app"
	Token   string // "forgetest-token-0123456789"
	// User is the token's account; "reasonix-bot". Its permission is
	// PermWrite until SetPermission changes it.
	User string
	// App makes the token a GitHub App installation token: GET /user is
	// refused (403) and the repository carries no permissions (GitHub only).
	App bool
	// PageSize caps per_page of list answers; 100 (the real maximum).
	// A test sets it low to make the client follow pages.
	PageSize int
	// MergeableAfter is how many reads of one pull request (GET of that
	// request) answer that its mergeability is not known yet after its
	// head or base moved, as the forges compute it in the background:
	// 1 when zero, none when negative.
	MergeableAfter int
}

// PullRequest is a pull (merge) request the server holds.
type PullRequest struct {
	Number int
	Title  string
	Body   string
	Head   string
	Base   string
	SHA    string
	Draft  bool
	Labels []string
	State  forge.PRState
	// Mergeable, when set (SetMergeable), is the forge's verdict on
	// merging the request whatever its commits; empty: computed by git
	// from the linked git server's head and base branches (clean without
	// one), once MergeableAfter reads have passed.
	Mergeable forge.Mergeable

	mergeKey   string // the head and base commits the reads below counted for
	mergeReads int
}

// Check is a CI check a test puts on a commit.
type Check struct {
	Name    string
	State   forge.CIState // pending, success or failure
	Summary string
	Log     string // check run output text (GitHub), job trace (GitLab)
	// Status makes it a GitHub commit status instead of a check run
	// (GitLab ignores it).
	Status bool
	// Stage and AllowFailure are GitLab job fields.
	Stage        string
	AllowFailure bool
	// Ref is the ref of the GitLab pipeline the job runs in; "main" when
	// empty. Checks of different refs run in separate pipelines, as a
	// branch pipeline and a merge request pipeline do.
	Ref string
}

// Comment is a comment posted through the API.
type Comment struct {
	On     forge.Item
	Body   string
	Author string
}

// Request is one request the server received.
type Request struct {
	Method string
	// URL is the request URI as sent (escaped path and query).
	URL string
	// Authorized tells whether it carried the right token.
	Authorized bool
}

// Server is a fake forge. Its methods are safe for concurrent use.
type Server struct {
	// URL is the API root to put in forge.Config.APIURL: an Enterprise
	// style ".../api/v3" for GitHub, ".../api/v4" for GitLab.
	URL  string
	Kind forge.Kind
	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	perms    map[string]forge.Permission
	userIDs  map[string]int64
	prs      []*PullRequest
	runs     map[string][]run // by commit
	comments []Comment
	requests []Request
	fail     []failure
	nextID   int64
	git      *GitServer

	holds holds
}

// run is one published check: its id and the commit's pipeline (GitLab).
type run struct {
	Check
	ID       int64
	Pipeline int64
}

type failure struct {
	status int
	body   string
}

// New starts a fake forge of kind on loopback; it stops with the test.
func New(t testing.TB, kind forge.Kind, opts Options) *Server {
	t.Helper()
	if opts.Project == "" {
		opts.Project = "acme/app"
	}
	if opts.Token == "" {
		opts.Token = "forgetest-token-0123456789"
	}
	if opts.User == "" {
		opts.User = "reasonix-bot"
	}
	if opts.PageSize <= 0 || opts.PageSize > 100 {
		opts.PageSize = 100
	}
	s := &Server{Kind: kind, opts: opts, perms: map[string]forge.Permission{}, userIDs: map[string]int64{},
		runs: map[string][]run{}, nextID: 1000}
	s.perms[opts.User] = forge.PermWrite
	s.userID(opts.User)
	mux := http.NewServeMux()
	var prefix string
	switch kind {
	case forge.GitHub:
		prefix = "/api/v3"
		s.gitHubRoutes(mux, prefix)
	case forge.GitLab:
		prefix = "/api/v4"
		s.gitLabRoutes(mux, prefix)
	default:
		t.Fatalf("forgetest: unknown kind %q", kind)
	}
	s.srv = httptest.NewServer(s.serve(mux)) // httptest listens on 127.0.0.1
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + prefix
	return s
}

// NewGitHub is New(t, forge.GitHub, opts).
func NewGitHub(t testing.TB, opts Options) *Server { return New(t, forge.GitHub, opts) }

// NewGitLab is New(t, forge.GitLab, opts).
func NewGitLab(t testing.TB, opts Options) *Server { return New(t, forge.GitLab, opts) }

// Config returns a forge.Config that reaches this server.
func (s *Server) Config() forge.Config {
	return forge.Config{Kind: s.Kind, APIURL: s.URL, Project: s.opts.Project, Token: s.opts.Token}
}

// Token is the token the server accepts.
func (s *Server) Token() string { return s.opts.Token }

// Project is the one project the server knows.
func (s *Server) Project() string { return s.opts.Project }

// User is the token's account.
func (s *Server) User() string { return s.opts.User }

// SetPermission sets user's role in the project; the token's own user
// loses push access below PermWrite.
func (s *Server) SetPermission(user string, p forge.Permission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[user] = p
	s.userID(user)
}

// AddUser makes user known to the forge without any role in the project.
func (s *Server) AddUser(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userID(user)
}

// AddComment puts a comment in place as if c.Author had written it in the
// forge's own interface.
func (s *Server) AddComment(c Comment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.comments = append(s.comments, c)
}

// AddPR puts an existing pull request in place (State defaults to open)
// and returns its number.
func (s *Server) AddPR(pr PullRequest) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addPR(pr).Number
}

func (s *Server) addPR(pr PullRequest) *PullRequest {
	pr.Number = len(s.prs) + 1
	if pr.State == "" {
		pr.State = forge.PROpen
	}
	if pr.SHA == "" {
		pr.SHA = fmt.Sprintf("%040d", pr.Number)
	}
	p := &pr
	s.prs = append(s.prs, p)
	return p
}

// liveSHA is p's head commit: the branch's on a linked git server while
// the pull request is open, as the forge follows pushes to it.
func (s *Server) liveSHA(p *PullRequest) string {
	if p.State == forge.PROpen {
		if sha, _ := s.headSHA(p.Head); sha != "" {
			return sha
		}
	}
	return p.SHA
}

// SetPRState closes, merges or reopens pull request n.
func (s *Server) SetPRState(n int, state forge.PRState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= 1 && n <= len(s.prs) {
		s.prs[n-1].State = state
	}
}

// SetMergeable fixes what the forge says of merging pull request n
// (forge.MergeUnknown: it never finishes computing); "" computes it again.
func (s *Server) SetMergeable(n int, m forge.Mergeable) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= 1 && n <= len(s.prs) {
		s.prs[n-1].Mergeable = m
	}
}

// mergeable is the verdict one read of p gets: unknown for the first
// MergeableAfter reads after its head or base moved, then the set one or
// git's. The caller holds s.mu.
func (s *Server) mergeable(p *PullRequest) forge.Mergeable {
	head, base := s.liveSHA(p), ""
	if s.git != nil {
		base = s.git.ref("refs/heads/" + p.Base)
	}
	if key := head + ".." + base; key != p.mergeKey {
		p.mergeKey, p.mergeReads = key, 0
	}
	p.mergeReads++
	after := s.opts.MergeableAfter
	if after == 0 {
		after = 1
	}
	switch {
	case p.mergeReads <= after:
		return forge.MergeUnknown
	case p.Mergeable != "":
		return p.Mergeable
	case s.git == nil:
		return forge.MergeClean
	}
	return s.git.mergeable(base, head)
}

// UseGit links the forge to the repository g serves, as a real forge's
// API and git side are one: opening a pull request then needs its head
// branch pushed, and a pull request's head commit is the branch's.
func (s *Server) UseGit(g *GitServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.git = g
}

// headSHA is the commit of branch on the linked git server: ok is false
// when a git server is linked and the branch is not there.
func (s *Server) headSHA(branch string) (sha string, ok bool) {
	if s.git == nil {
		return "", true
	}
	sha = s.git.ref("refs/heads/" + branch)
	return sha, sha != ""
}

// PRs returns copies of every pull request, in number order.
func (s *Server) PRs() []PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PullRequest, len(s.prs))
	for i, p := range s.prs {
		out[i] = *p
		out[i].Labels = slices.Clone(p.Labels)
	}
	return out
}

// SetChecks replaces the checks of commit sha. On GitLab each call makes
// new pipelines (one per Ref), as a re-run does.
func (s *Server) SetChecks(sha string, checks ...Check) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pipelines := map[string]int64{}
	rs := make([]run, len(checks))
	for i, c := range checks {
		if c.Ref == "" {
			c.Ref = "main"
		}
		if pipelines[c.Ref] == 0 {
			s.nextID++
			pipelines[c.Ref] = s.nextID
		}
		s.nextID++
		rs[i] = run{Check: c, ID: s.nextID, Pipeline: pipelines[c.Ref]}
	}
	s.runs[sha] = rs
}

// Comments returns the comments posted so far.
func (s *Server) Comments() []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.comments)
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// FailNext makes the next authorized request fail with status and a body
// carrying message in the forge's error shape.
func (s *Server) FailNext(status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = append(s.fail, failure{status, message})
}

func (s *Server) userID(user string) int64 {
	id, ok := s.userIDs[user]
	if !ok {
		id = int64(len(s.userIDs) + 1)
		s.userIDs[user] = id
	}
	return id
}

// serve records the request, checks the token and injects failures before
// the routes see it.
func (s *Server) serve(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := s.authorized(r)
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, URL: r.RequestURI, Authorized: ok})
		var f *failure
		if ok && len(s.fail) > 0 {
			f = &s.fail[0]
			s.fail = s.fail[1:]
		}
		s.mu.Unlock()
		switch {
		case !ok && s.Kind == forge.GitHub:
			s.errorJSON(w, http.StatusUnauthorized, "Bad credentials")
		case !ok:
			s.errorJSON(w, http.StatusUnauthorized, "401 Unauthorized")
		case f != nil:
			s.errorJSON(w, f.status, f.body)
		default:
			s.holds.serve(w, r, next)
		}
	})
}

func (s *Server) authorized(r *http.Request) bool {
	var got string
	if s.Kind == forge.GitLab && r.Header.Get("PRIVATE-TOKEN") != "" {
		got = r.Header.Get("PRIVATE-TOKEN")
	} else {
		auth := r.Header.Get("Authorization")
		scheme, tok, _ := strings.Cut(auth, " ")
		if strings.EqualFold(scheme, "bearer") || s.Kind == forge.GitHub && strings.EqualFold(scheme, "token") {
			got = tok
		}
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

// errorJSON answers in the forge's error shape: GitHub
// {"message","documentation_url"}, GitLab {"message"}.
func (s *Server) errorJSON(w http.ResponseWriter, status int, message string) {
	body := map[string]any{"message": message}
	if s.Kind == forge.GitHub {
		body["documentation_url"] = "https://docs.github.com/rest"
		body["status"] = strconv.Itoa(status)
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// page answers with one page of items, honouring per_page (capped at the
// server's PageSize) and page, and sends the rel="next" Link both forges
// send. wrap, when non-nil, puts the page into an object.
func page[T any](s *Server, w http.ResponseWriter, r *http.Request, items []T, wrap func([]T) any) {
	size := s.opts.PageSize
	if n, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && n > 0 && n < size {
		size = n
	}
	num := 1
	if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 1 {
		num = n
	}
	lo := min((num-1)*size, len(items))
	hi := min(lo+size, len(items))
	if hi < len(items) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(num+1))
		next := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: q.Encode()}
		w.Header().Set("Link", `<`+next.String()+`>; rel="next"`)
	}
	if s.Kind == forge.GitLab {
		w.Header().Set("X-Total", strconv.Itoa(len(items)))
		w.Header().Set("X-Page", strconv.Itoa(num))
	}
	// An empty page is [] as on the real APIs, never null.
	pg := append([]T{}, items[lo:hi]...)
	var v any = pg
	if wrap != nil {
		v = wrap(pg)
	}
	writeJSON(w, http.StatusOK, v)
}

// webURL is where a person would see a path of the project.
func (s *Server) webURL(path string) string {
	return s.srv.URL + "/" + s.opts.Project + path
}

func readJSON(r *http.Request, v any) error {
	return json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(v)
}

// listComments lists the comments on one issue or pull request, oldest
// first, in pages: GitHub's issue comments (whose numbers cover pull
// requests too) or GitLab's notes of an issue (issue) or merge request.
func (s *Server) listComments(issue bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(cmpValue(r.PathValue("number"), r.PathValue("iid")))
		if err != nil || n < 1 {
			s.errorJSON(w, http.StatusNotFound, "Not Found")
			return
		}
		s.mu.Lock()
		var out []map[string]any
		for i, c := range s.comments {
			if c.On.Number != n || (s.Kind == forge.GitLab && c.On.Issue != issue) {
				continue
			}
			item := map[string]any{"id": i + 1, "body": c.Body}
			if s.Kind == forge.GitHub {
				item["user"] = map[string]any{"login": c.Author}
			} else {
				item["author"] = map[string]any{"username": c.Author}
			}
			out = append(out, item)
		}
		s.mu.Unlock()
		page(s, w, r, out, nil)
	}
}

func cmpValue(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
