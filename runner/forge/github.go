package forge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// gitHub speaks REST v3 to github.com or an Enterprise Server.
type gitHub struct {
	c           *client
	owner, repo string
}

var _ Forge = (*gitHub)(nil)

func (g *gitHub) repoPath() string {
	return "/repos/" + url.PathEscape(g.owner) + "/" + url.PathEscape(g.repo)
}

func (g *gitHub) Verify(ctx context.Context) (Identity, error) {
	var user struct {
		Login string `json:"login"`
	}
	err := g.c.do(ctx, "check the token (GET /user)", http.MethodGet, "/user", nil, nil, &user)
	// A GitHub App's installation token is no user and gets 403 here; it
	// is still a valid token, and the project check below judges it.
	if err != nil && !errors.Is(err, ErrForbidden) {
		return Identity{}, err
	}
	var repo struct {
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
		Permissions   *struct {
			Admin bool `json:"admin"`
			Push  bool `json:"push"`
		} `json:"permissions"`
	}
	op := "find project " + g.owner + "/" + g.repo
	if err := g.c.do(ctx, op, http.MethodGet, g.repoPath(), nil, nil, &repo); err != nil {
		return Identity{User: user.Login}, err
	}
	id := Identity{User: user.Login, Project: repo.FullName, DefaultBranch: repo.DefaultBranch}
	// GitHub includes permissions for the authenticated caller; without
	// them (some app tokens) nothing is known and nothing is claimed.
	if repo.Permissions == nil {
		id.CanPush = true
		return id, nil
	}
	id.CanPush = repo.Permissions.Push || repo.Permissions.Admin
	if !id.CanPush {
		return id, fmt.Errorf("forge: github: project %s: user %q: %w", repo.FullName, user.Login, ErrNoPush)
	}
	return id, nil
}

// ghPull is the part of a GitHub pull request this package reads.
type ghPull struct {
	Number   int        `json:"number"`
	HTMLURL  string     `json:"html_url"`
	State    string     `json:"state"`
	Draft    bool       `json:"draft"`
	MergedAt *time.Time `json:"merged_at"`
	Head     struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
	// Mergeable is only in the answer for one pull request: null until
	// GitHub has computed it in the background.
	Mergeable *bool `json:"mergeable"`
}

func (p ghPull) pullRequest() PullRequest {
	pr := PullRequest{Number: p.Number, URL: p.HTMLURL, State: PRClosed, Draft: p.Draft,
		Head: p.Head.Ref, Base: p.Base.Ref, SHA: p.Head.SHA}
	switch {
	case p.State == "open":
		pr.State = PROpen
	case p.MergedAt != nil:
		pr.State = PRMerged
	}
	return pr
}

func (g *gitHub) GetPR(ctx context.Context, number int) (PullRequest, error) {
	if number <= 0 {
		return PullRequest{}, errors.New("forge: github: read pull request: no number")
	}
	var p ghPull
	path := g.repoPath() + "/pulls/" + strconv.Itoa(number)
	if err := g.c.do(ctx, "read pull request #"+strconv.Itoa(number), http.MethodGet, path, nil, nil, &p); err != nil {
		return PullRequest{}, err
	}
	pr := p.pullRequest()
	// mergeable false is a conflict with the base (mergeable_state
	// "dirty"); a request blocked by reviews or checks is still mergeable.
	switch {
	case p.Mergeable == nil:
		pr.Mergeable = MergeUnknown
	case *p.Mergeable:
		pr.Mergeable = MergeClean
	default:
		pr.Mergeable = MergeConflict
	}
	return pr, nil
}

func (g *gitHub) FindPR(ctx context.Context, head string) (PullRequest, bool, error) {
	// The head filter wants "owner:branch"; PRs from forks do not count,
	// the service pushes to the project itself.
	q := url.Values{"head": {g.owner + ":" + head}, "state": {"all"}, "sort": {"created"}, "direction": {"desc"}}
	var found []PullRequest
	err := g.c.pages(ctx, "find pull request for "+head, g.repoPath()+"/pulls", q, func(raw []byte) (bool, error) {
		var page []ghPull
		if err := json.Unmarshal(raw, &page); err != nil {
			return true, fmt.Errorf("forge: github: find pull request: unexpected answer: %w", err)
		}
		for _, p := range page {
			if p.Head.Ref == head {
				found = append(found, p.pullRequest())
			}
		}
		return false, nil
	})
	if err != nil {
		return PullRequest{}, false, err
	}
	pr, ok := pickPR(found)
	return pr, ok, nil
}

func (g *gitHub) OpenPR(ctx context.Context, in PR) (PullRequest, error) {
	body := map[string]any{"title": in.Title, "body": in.Body, "head": in.Head, "base": in.Base, "draft": in.Draft}
	var p ghPull
	err := g.c.do(ctx, "open pull request for "+in.Head, http.MethodPost, g.repoPath()+"/pulls", nil, body, &p)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity &&
			strings.Contains(strings.ToLower(ae.Message), "already exists") {
			ae.Err = ErrExists
		}
		return PullRequest{}, err
	}
	pr := p.pullRequest()
	if len(in.Labels) > 0 {
		// Labels live on the issue side of a pull request. The PR exists
		// now: a failure here is reported with it, not instead of it.
		path := g.repoPath() + "/issues/" + strconv.Itoa(p.Number) + "/labels"
		if err := g.c.do(ctx, "label pull request", http.MethodPost, path, nil, map[string]any{"labels": in.Labels}, nil); err != nil {
			return pr, err
		}
	}
	return pr, nil
}

// GitHub check IDs carry which of the two APIs they came from.
const (
	ghRunPrefix    = "check-run:"
	ghStatusPrefix = "status:"
)

func (g *gitHub) Checks(ctx context.Context, sha string) (CI, error) {
	if sha == "" {
		return CI{}, errors.New("forge: github: checks: no commit")
	}
	var checks []Check
	ref := "/commits/" + url.PathEscape(sha)
	err := g.c.pages(ctx, "list check runs", g.repoPath()+ref+"/check-runs", url.Values{"filter": {"latest"}}, func(raw []byte) (bool, error) {
		var page struct {
			CheckRuns []struct {
				ID         int64  `json:"id"`
				Name       string `json:"name"`
				Status     string `json:"status"`
				Conclusion string `json:"conclusion"`
				HTMLURL    string `json:"html_url"`
				DetailsURL string `json:"details_url"`
				Output     struct {
					Title   string `json:"title"`
					Summary string `json:"summary"`
				} `json:"output"`
			} `json:"check_runs"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return true, fmt.Errorf("forge: github: list check runs: unexpected answer: %w", err)
		}
		for _, r := range page.CheckRuns {
			summary := strings.TrimSpace(r.Output.Title)
			if summary == "" {
				summary = firstLine(r.Output.Summary)
			}
			if summary == "" && r.Conclusion != "" {
				summary = r.Conclusion
			}
			checks = append(checks, Check{ID: ghRunPrefix + strconv.FormatInt(r.ID, 10), Name: r.Name,
				State: ghRunState(r.Status, r.Conclusion), Summary: summary, URL: cmp.Or(r.HTMLURL, r.DetailsURL)})
		}
		return len(page.CheckRuns) == 0, nil
	})
	if err != nil {
		return CI{}, err
	}
	// The combined status holds the latest status of each context.
	err = g.c.pages(ctx, "read commit statuses", g.repoPath()+ref+"/status", nil, func(raw []byte) (bool, error) {
		var page struct {
			Statuses []struct {
				ID          int64  `json:"id"`
				Context     string `json:"context"`
				State       string `json:"state"`
				Description string `json:"description"`
				TargetURL   string `json:"target_url"`
			} `json:"statuses"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return true, fmt.Errorf("forge: github: read commit statuses: unexpected answer: %w", err)
		}
		for _, s := range page.Statuses {
			checks = append(checks, Check{ID: ghStatusPrefix + s.Context, Name: s.Context,
				State: ghStatusState(s.State), Summary: s.Description, URL: s.TargetURL})
		}
		return len(page.Statuses) == 0, nil
	})
	if err != nil {
		return CI{}, err
	}
	return combine(checks), nil
}

func ghRunState(status, conclusion string) CIState {
	if status != "completed" {
		return CIPending
	}
	switch conclusion {
	case "success", "neutral", "skipped":
		return CISuccess
	}
	// failure, cancelled, timed_out, action_required, stale, startup_failure
	return CIFailure
}

func ghStatusState(s string) CIState {
	switch s {
	case "success":
		return CISuccess
	case "failure", "error":
		return CIFailure
	}
	return CIPending
}

func (g *gitHub) Logs(ctx context.Context, check Check, max int) (string, error) {
	id, ok := strings.CutPrefix(check.ID, ghRunPrefix)
	if !ok {
		if strings.HasPrefix(check.ID, ghStatusPrefix) {
			return "", fmt.Errorf("forge: github: logs of %q: %w", check.Name, ErrNoLogs)
		}
		return "", fmt.Errorf("forge: github: logs: %q is not a check of this forge", check.ID)
	}
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return "", fmt.Errorf("forge: github: logs: %q is not a check run id", check.ID)
	}
	// A check run's output is what the forge's API offers as its log; the
	// Actions job log lives in blob storage behind a redirect to another
	// host, which this client does not follow with the token.
	var run struct {
		Output struct {
			Title   string `json:"title"`
			Summary string `json:"summary"`
			Text    string `json:"text"`
		} `json:"output"`
	}
	if err := g.c.do(ctx, "read check run "+check.Name, http.MethodGet, g.repoPath()+"/check-runs/"+id, nil, nil, &run); err != nil {
		return "", err
	}
	var parts []string
	for _, p := range []string{run.Output.Title, run.Output.Summary, run.Output.Text} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("forge: github: logs of %q: %w", check.Name, ErrNoLogs)
	}
	return tailString(strings.Join(parts, "\n\n"), max), nil
}

func (g *gitHub) Comment(ctx context.Context, on Item, body string) error {
	if on.Number <= 0 {
		return errors.New("forge: github: comment: no issue or pull request number")
	}
	// Pull requests are issues for comments on the conversation.
	path := g.repoPath() + "/issues/" + strconv.Itoa(on.Number) + "/comments"
	return g.c.do(ctx, "comment on #"+strconv.Itoa(on.Number), http.MethodPost, path, nil, map[string]string{"body": body}, nil)
}

func (g *gitHub) FindComment(ctx context.Context, on Item, marker, author string) (bool, error) {
	if on.Number <= 0 || marker == "" || author == "" {
		return false, errors.New("forge: github: find comment: no issue or pull request number, marker or author")
	}
	path := g.repoPath() + "/issues/" + strconv.Itoa(on.Number) + "/comments"
	return findComment(ctx, g.c, "read the comments on #"+strconv.Itoa(on.Number), path, marker, author)
}

func (g *gitHub) Permission(ctx context.Context, user string) (Permission, error) {
	if user == "" {
		return PermNone, nil
	}
	var out struct {
		Permission string `json:"permission"`
	}
	path := g.repoPath() + "/collaborators/" + url.PathEscape(user) + "/permission"
	if err := g.c.do(ctx, "read permission of "+user, http.MethodGet, path, nil, nil, &out); err != nil {
		if errors.Is(err, ErrNotFound) {
			// An unknown login: no permission. A missing project answers
			// 404 too, and no permission is the safe answer for it.
			return PermNone, nil
		}
		return PermNone, err
	}
	// "permission" is the legacy role: admin, write (also maintain), read
	// (also triage) or none.
	switch out.Permission {
	case "admin":
		return PermAdmin, nil
	case "write", "maintain":
		return PermWrite, nil
	case "read", "triage":
		return PermRead, nil
	}
	return PermNone, nil
}

// tailString keeps the last logBound(max) bytes of s, starting at a whole
// character.
func tailString(s string, max int) string {
	max = logBound(max)
	if len(s) <= max {
		return s
	}
	s = s[len(s)-max:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}
