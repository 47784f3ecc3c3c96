package forge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Forge is one project on one forge, reached with one token. The methods
// are the whole contract publishing needs; each is one or a few REST calls
// and safe for concurrent use.
type Forge interface {
	// Verify checks the token and the project: that the token is valid, the
	// project exists and is visible to it, and that it may push. A token
	// that may read but not push returns the Identity with ErrNoPush.
	Verify(ctx context.Context) (Identity, error)
	// FindPR returns the most relevant pull request whose head is the
	// branch head, open or not (an open one wins over closed ones, then the
	// newest), so that a publish interrupted after opening one finds it
	// again. found is false when there is none.
	FindPR(ctx context.Context, head string) (pr PullRequest, found bool, err error)
	// OpenPR opens a pull request (GitLab: merge request). A second open
	// request for the same head fails with ErrExists. When the request was
	// opened but a follow-up step failed (labels on GitHub), the
	// PullRequest is returned together with the error.
	OpenPR(ctx context.Context, pr PR) (PullRequest, error)
	// GetPR reads pull request number, with Mergeable filled in: the
	// forge's own word on whether it merges into its base. The forge
	// computes that in the background after the head or the base moved,
	// so the first reads may say MergeUnknown; ask again a little later
	// (a read also starts the computation).
	GetPR(ctx context.Context, number int) (PullRequest, error)
	// Checks returns the combined CI state of commit sha.
	Checks(ctx context.Context, sha string) (CI, error)
	// Logs returns at most max bytes (DefaultLogBytes when max <= 0, at
	// most MaxLogBytes) of the check's log; of a longer log its end, where
	// failures are. It returns ErrNoLogs where the forge keeps none for
	// this kind of check (a GitHub commit status). The text comes from CI
	// and is untrusted.
	Logs(ctx context.Context, check Check, max int) (string, error)
	// Comment posts body on an issue or a pull request.
	Comment(ctx context.Context, on Item, body string) error
	// FindComment reports whether a comment that author wrote on an issue
	// or a pull request holds marker, so that a comment posted just before
	// a crash is found rather than posted twice. Only author's comments
	// count (a login or username, in any case): anyone can paste a marker,
	// and a stranger's copy must not silence the service. It reads at most
	// the first 2,000 comments.
	FindComment(ctx context.Context, on Item, marker, author string) (bool, error)
	// Permission returns what user may do in the project; a user the
	// forge does not know, or who is no member, has PermNone.
	Permission(ctx context.Context, user string) (Permission, error)
}

// Kind names a forge API.
type Kind string

// The forges this package speaks to.
const (
	GitHub Kind = "github"
	GitLab Kind = "gitlab"
)

// ParseKind turns a configured forge name ("github", "GitLab") into a Kind,
// or an error naming the known ones.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case GitHub, GitLab:
		return k, nil
	}
	return "", fmt.Errorf("forge: unknown kind %q (known: %s, %s)", s, GitHub, GitLab)
}

// Default API roots, used when Config.APIURL is empty.
const (
	DefaultGitHubURL = "https://api.github.com"
	DefaultGitLabURL = "https://gitlab.com/api/v4"
)

// DefaultLogBytes bounds Logs when the caller passes no bound, and
// MaxLogBytes however large a bound the caller passes.
const (
	DefaultLogBytes = 16 << 10
	MaxLogBytes     = 1 << 20
)

// Config selects and reaches a forge.
type Config struct {
	// Kind is GitHub or GitLab.
	Kind Kind
	// APIURL is the API root: DefaultGitHubURL, an Enterprise Server's
	// "https://host/api/v3", or a GitLab's "https://host/api/v4". Empty
	// means the public service of Kind.
	APIURL string
	// Project is "owner/repo" on GitHub, the full path ("group/sub/app")
	// on GitLab.
	Project string
	// Token authenticates every request, in a header only.
	Token string
	// HTTPClient sends the requests; nil means a client of its own. Its
	// redirect policy is replaced by one that never follows a redirect to
	// another host, so the token cannot leave for one.
	HTTPClient *http.Client
	// UserAgent is sent with every request; empty means "reasonix".
	UserAgent string
}

// New returns the Forge described by cfg, or an error naming the first
// field that is wrong. It makes no request; Verify does.
func New(cfg Config) (Forge, error) {
	kind, err := ParseKind(string(cfg.Kind))
	if err != nil {
		return nil, err
	}
	cfg.Kind = kind
	def := DefaultGitHubURL
	if kind == GitLab {
		def = DefaultGitLabURL
	}
	base, err := apiBase(cmp.Or(strings.TrimSpace(cfg.APIURL), def))
	if err != nil {
		return nil, err
	}
	// The web address in place of the API root is the usual mistake; every
	// call would then fail with a confusing 404 or an HTML page.
	switch {
	case kind == GitLab && !strings.HasSuffix(base.Path, "/api/v4"):
		return nil, fmt.Errorf("forge: api_url %q: a GitLab API root ends in /api/v4", base.Redacted())
	case kind == GitHub && base.Path != "" && !strings.HasSuffix(base.Path, "/api/v3"):
		return nil, fmt.Errorf("forge: api_url %q: a GitHub API root is https://api.github.com or, on Enterprise Server, ends in /api/v3", base.Redacted())
	}
	project := strings.Trim(strings.TrimSpace(cfg.Project), "/")
	parts := strings.Split(project, "/")
	if project == "" || len(parts) < 2 || (cfg.Kind == GitHub && len(parts) != 2) || slices.Contains(parts, "") {
		if cfg.Kind == GitHub {
			return nil, fmt.Errorf("forge: project %q: want owner/repo", cfg.Project)
		}
		return nil, fmt.Errorf("forge: project %q: want the project's full path, group/name", cfg.Project)
	}
	if cfg.Token == "" {
		return nil, errors.New("forge: no token")
	}
	if strings.ContainsAny(cfg.Token, "\r\n") {
		return nil, errors.New("forge: the token holds a line break")
	}
	c := newClient(cfg.Kind, base, cfg.Token, cfg.HTTPClient, cmp.Or(cfg.UserAgent, "reasonix"))
	if cfg.Kind == GitHub {
		return &gitHub{c: c, owner: parts[0], repo: parts[1]}, nil
	}
	return &gitLab{c: c, project: project}, nil
}

// apiBase parses an API root and refuses what would put a secret or
// surprise in every request URL.
func apiBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url's error quotes the input, which could hold credentials.
		return nil, errors.New("forge: api_url is not a URL")
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("forge: api_url: scheme %q, want https or http", u.Scheme)
	case u.Host == "":
		return nil, errors.New("forge: api_url has no host")
	case u.User != nil:
		return nil, errors.New("forge: api_url holds credentials; name the token's variable instead")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("forge: api_url has a query or fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Identity is what Verify learned: who the token is and the project it
// reaches.
type Identity struct {
	User          string // login (GitHub) or username (GitLab)
	Project       string // full name as the forge spells it
	DefaultBranch string
	// CanPush is false when the forge reports that the token may not push
	// (Verify then also returns ErrNoPush); a forge that reports nothing
	// about the caller's permissions leaves it true.
	CanPush bool
}

// PR asks for a pull request.
type PR struct {
	Title  string
	Body   string
	Head   string // the branch with the work
	Base   string // the branch to merge into
	Draft  bool
	Labels []string
}

// PullRequest is a pull request (GitLab: merge request) as the forge sees it.
type PullRequest struct {
	Number int     // GitHub number, GitLab iid
	URL    string  // the web page
	State  PRState // open, closed or merged
	Draft  bool
	Head   string
	Base   string
	SHA    string // the head commit, when the forge says
	// Mergeable is what the forge says of merging the request into its
	// base; only GetPR reads it ("" from the other methods).
	Mergeable Mergeable
}

// Mergeable is a forge's verdict on merging a pull request into its base:
// GitHub's mergeable, GitLab's detailed_merge_status (merge_status on
// older servers).
type Mergeable string

// The verdicts. Only conflicts count against a request: one that merges
// cleanly but waits for a review or for CI is MergeClean.
const (
	// MergeUnknown: the forge has not computed it yet (GitHub's null,
	// GitLab's "checking"), or says nothing of it.
	MergeUnknown  Mergeable = "unknown"
	MergeClean    Mergeable = "clean"    // merges without conflicts
	MergeConflict Mergeable = "conflict" // conflicts with its base
)

// PRState is a pull request's lifecycle state.
type PRState string

// Pull request states, the same for both forges.
const (
	PROpen   PRState = "open"
	PRClosed PRState = "closed"
	PRMerged PRState = "merged"
)

// Item names an issue or a pull request to comment on. GitLab numbers them
// separately, so the number alone is not enough.
type Item struct {
	Number int
	Issue  bool // false: a pull/merge request
}

// PullRequestItem names pull (merge) request n.
func PullRequestItem(n int) Item { return Item{Number: n} }

// IssueItem names issue n.
func IssueItem(n int) Item { return Item{Number: n, Issue: true} }

// Permission is a user's role in a project, coarsened to what steering and
// approval rules ask about. The values order by power.
type Permission int

// Permissions, weakest first.
const (
	PermNone Permission = iota
	PermRead
	PermWrite
	PermAdmin
)

// String is the role's name: none, read, write or admin.
func (p Permission) String() string {
	switch p {
	case PermRead:
		return "read"
	case PermWrite:
		return "write"
	case PermAdmin:
		return "admin"
	}
	return "none"
}

// pickPR chooses among the pull requests of one head branch: an open one
// over closed and merged ones, then the newest (highest number).
func pickPR(prs []PullRequest) (PullRequest, bool) {
	if len(prs) == 0 {
		return PullRequest{}, false
	}
	return slices.MaxFunc(prs, func(a, b PullRequest) int {
		if ao, bo := a.State == PROpen, b.State == PROpen; ao != bo {
			if ao {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Number, b.Number)
	}), true
}

// logBound applies DefaultLogBytes and MaxLogBytes to a caller's bound.
func logBound(max int) int {
	if max <= 0 {
		return DefaultLogBytes
	}
	return min(max, MaxLogBytes)
}
