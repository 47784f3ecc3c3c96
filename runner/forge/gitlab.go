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
)

// gitLab speaks REST v4 to gitlab.com or a self-managed instance.
type gitLab struct {
	c       *client
	project string // full path, "group/sub/app"
}

var _ Forge = (*gitLab)(nil)

// projectPath addresses the project by its URL-encoded full path, the
// form GitLab accepts in place of the numeric id ("group%2Fapp").
func (g *gitLab) projectPath() string {
	segs := strings.Split(g.project, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/projects/" + strings.Join(segs, "%2F")
}

// GitLab access levels (members API).
const (
	glReporter   = 20
	glDeveloper  = 30
	glMaintainer = 40
)

func (g *gitLab) Verify(ctx context.Context) (Identity, error) {
	var user struct {
		Username string `json:"username"`
	}
	if err := g.c.do(ctx, "check the token (GET /user)", http.MethodGet, "/user", nil, nil, &user); err != nil {
		return Identity{}, err
	}
	var p struct {
		PathWithNamespace string `json:"path_with_namespace"`
		DefaultBranch     string `json:"default_branch"`
		Permissions       *struct {
			ProjectAccess *struct {
				AccessLevel int `json:"access_level"`
			} `json:"project_access"`
			GroupAccess *struct {
				AccessLevel int `json:"access_level"`
			} `json:"group_access"`
		} `json:"permissions"`
	}
	if err := g.c.do(ctx, "find project "+g.project, http.MethodGet, g.projectPath(), nil, nil, &p); err != nil {
		return Identity{User: user.Username}, err
	}
	id := Identity{User: user.Username, Project: p.PathWithNamespace, DefaultBranch: p.DefaultBranch}
	if p.Permissions == nil {
		id.CanPush = true // not reported: nothing is claimed
		return id, nil
	}
	level := 0
	if a := p.Permissions.ProjectAccess; a != nil {
		level = max(level, a.AccessLevel)
	}
	if a := p.Permissions.GroupAccess; a != nil {
		level = max(level, a.AccessLevel)
	}
	id.CanPush = level >= glDeveloper
	if !id.CanPush {
		return id, fmt.Errorf("forge: gitlab: project %s: user %s has access level %d: %w", p.PathWithNamespace, user.Username, level, ErrNoPush)
	}
	return id, nil
}

// glMR is the part of a GitLab merge request this package reads.
type glMR struct {
	IID          int    `json:"iid"`
	WebURL       string `json:"web_url"`
	State        string `json:"state"`
	Draft        bool   `json:"draft"`
	SourceBranch string `json:"source_branch"`
	TargetBranch string `json:"target_branch"`
	SHA          string `json:"sha"`
	// What GitLab knows of merging it, computed in the background.
	MergeStatus         string `json:"merge_status"`          // deprecated, what older servers send
	DetailedMergeStatus string `json:"detailed_merge_status"` // 15.6 and later
	HasConflicts        bool   `json:"has_conflicts"`
}

// mergeable reads GitLab's merge status: only a conflict with the target
// counts against the request; what else blocks a merge (approvals, a
// pipeline, a draft) leaves it clean.
func (m glMR) mergeable() Mergeable {
	switch m.DetailedMergeStatus {
	case "unchecked", "checking", "preparing", "approvals_syncing":
		return MergeUnknown
	case "conflict":
		return MergeConflict
	case "":
		switch m.MergeStatus {
		case "can_be_merged":
			return MergeClean
		case "cannot_be_merged":
			return MergeConflict
		}
		return MergeUnknown // unchecked, checking, cannot_be_merged_recheck, or nothing
	}
	if m.HasConflicts {
		return MergeConflict
	}
	return MergeClean
}

func (m glMR) pullRequest() PullRequest {
	pr := PullRequest{Number: m.IID, URL: m.WebURL, State: PRClosed, Draft: m.Draft,
		Head: m.SourceBranch, Base: m.TargetBranch, SHA: m.SHA}
	switch m.State {
	case "opened", "locked":
		pr.State = PROpen
	case "merged":
		pr.State = PRMerged
	}
	return pr
}

func (g *gitLab) GetPR(ctx context.Context, number int) (PullRequest, error) {
	if number <= 0 {
		return PullRequest{}, errors.New("forge: gitlab: read merge request: no number")
	}
	var m glMR
	path := g.projectPath() + "/merge_requests/" + strconv.Itoa(number)
	// The recheck asks GitLab to compute a merge status it has not (it
	// does not on its own for a request nobody looks at).
	q := url.Values{"with_merge_status_recheck": {"true"}}
	if err := g.c.do(ctx, "read merge request !"+strconv.Itoa(number), http.MethodGet, path, q, nil, &m); err != nil {
		return PullRequest{}, err
	}
	pr := m.pullRequest()
	pr.Mergeable = m.mergeable()
	return pr, nil
}

func (g *gitLab) FindPR(ctx context.Context, head string) (PullRequest, bool, error) {
	q := url.Values{"source_branch": {head}, "state": {"all"}}
	var found []PullRequest
	err := g.c.pages(ctx, "find merge request for "+head, g.projectPath()+"/merge_requests", q, func(raw []byte) (bool, error) {
		var page []glMR
		if err := json.Unmarshal(raw, &page); err != nil {
			return true, fmt.Errorf("forge: gitlab: find merge request: unexpected answer: %w", err)
		}
		for _, m := range page {
			if m.SourceBranch == head {
				found = append(found, m.pullRequest())
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

func (g *gitLab) OpenPR(ctx context.Context, in PR) (PullRequest, error) {
	title := in.Title
	if in.Draft && !strings.HasPrefix(strings.ToLower(title), "draft:") {
		// The "Draft:" prefix is what every GitLab version understands;
		// the draft attribute is newer.
		title = "Draft: " + title
	}
	body := map[string]any{"source_branch": in.Head, "target_branch": in.Base, "title": title,
		"description": in.Body, "remove_source_branch": false}
	if len(in.Labels) > 0 {
		body["labels"] = strings.Join(in.Labels, ",")
	}
	var m glMR
	err := g.c.do(ctx, "open merge request for "+in.Head, http.MethodPost, g.projectPath()+"/merge_requests", nil, body, &m)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusConflict {
			ae.Err = ErrExists
		}
		return PullRequest{}, err
	}
	return m.pullRequest(), nil
}

const glJobPrefix = "job:"

// maxPipelines bounds how many pipelines of one commit are read.
const maxPipelines = 4

func (g *gitLab) Checks(ctx context.Context, sha string) (CI, error) {
	if sha == "" {
		return CI{}, errors.New("forge: gitlab: checks: no commit")
	}
	type pipeline struct {
		ID     int64  `json:"id"`
		Ref    string `json:"ref"`
		Source string `json:"source"`
		Status string `json:"status"`
		WebURL string `json:"web_url"`
	}
	// A commit can have a branch pipeline and a merge request pipeline
	// (another ref) at once, and both count. Within one ref a re-run
	// replaces what ran before, so only the newest pipeline of each ref
	// is read; the list comes newest first.
	var latest []pipeline
	seen := map[string]bool{}
	q := url.Values{"sha": {sha}, "order_by": {"id"}, "sort": {"desc"}}
	err := g.c.pages(ctx, "list pipelines", g.projectPath()+"/pipelines", q, func(raw []byte) (bool, error) {
		var page []pipeline
		if err := json.Unmarshal(raw, &page); err != nil {
			return true, fmt.Errorf("forge: gitlab: list pipelines: unexpected answer: %w", err)
		}
		for _, p := range page {
			if !seen[p.Ref] && len(latest) < maxPipelines {
				seen[p.Ref] = true
				latest = append(latest, p)
			}
		}
		return true, nil // one page of the newest is enough
	})
	if err != nil {
		return CI{}, err
	}
	var checks []Check
	for _, p := range latest {
		jobs, err := g.jobs(ctx, p.ID)
		if err != nil {
			return CI{}, err
		}
		if len(jobs) == 0 {
			// A pipeline without jobs still has a state worth reporting.
			state, summary := glJobState(p.Status, false)
			jobs = []Check{{ID: "pipeline:" + strconv.FormatInt(p.ID, 10),
				Name: "pipeline", State: state, Summary: summary, URL: p.WebURL}}
		}
		if len(latest) > 1 {
			// Name which pipeline a job ran in, or the same job of two
			// pipelines would read as one check twice.
			for i := range jobs {
				jobs[i].Name = cmp.Or(p.Source, p.Ref) + ": " + jobs[i].Name
			}
		}
		checks = append(checks, jobs...)
	}
	return combine(checks), nil
}

// jobs lists the jobs of pipeline id, without retried ones.
func (g *gitLab) jobs(ctx context.Context, id int64) ([]Check, error) {
	var checks []Check
	path := g.projectPath() + "/pipelines/" + strconv.FormatInt(id, 10) + "/jobs"
	err := g.c.pages(ctx, "list pipeline jobs", path, url.Values{"include_retried": {"false"}}, func(raw []byte) (bool, error) {
		var page []struct {
			ID            int64  `json:"id"`
			Name          string `json:"name"`
			Stage         string `json:"stage"`
			Status        string `json:"status"`
			WebURL        string `json:"web_url"`
			AllowFailure  bool   `json:"allow_failure"`
			FailureReason string `json:"failure_reason"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return true, fmt.Errorf("forge: gitlab: list pipeline jobs: unexpected answer: %w", err)
		}
		for _, j := range page {
			state, summary := glJobState(j.Status, j.AllowFailure)
			if j.FailureReason != "" {
				summary += ": " + j.FailureReason
			}
			name := j.Name
			if j.Stage != "" {
				name = j.Stage + "/" + j.Name
			}
			checks = append(checks, Check{ID: glJobPrefix + strconv.FormatInt(j.ID, 10), Name: name,
				State: state, Summary: summary, URL: j.WebURL})
		}
		return len(page) == 0, nil
	})
	return checks, err
}

// glJobState maps a job's (or pipeline's) status. A job allowed to fail
// does not fail the commit; a manual job nobody started does not hold it.
func glJobState(status string, allowFailure bool) (CIState, string) {
	switch status {
	case "success":
		return CISuccess, "passed"
	case "skipped", "manual":
		return CISuccess, status
	case "failed":
		if allowFailure {
			return CISuccess, "failed (allowed to fail)"
		}
		return CIFailure, "failed"
	case "canceled", "canceling":
		return CIFailure, status
	}
	// created, pending, running, preparing, scheduled,
	// waiting_for_resource, waiting_for_callback
	return CIPending, status
}

func (g *gitLab) Logs(ctx context.Context, check Check, max int) (string, error) {
	id, ok := strings.CutPrefix(check.ID, glJobPrefix)
	if !ok {
		return "", fmt.Errorf("forge: gitlab: logs of %q: %w", check.Name, ErrNoLogs)
	}
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return "", fmt.Errorf("forge: gitlab: logs: %q is not a job id", check.ID)
	}
	return g.c.tail(ctx, "read the log of job "+check.Name, g.projectPath()+"/jobs/"+id+"/trace", logBound(max))
}

func (g *gitLab) Comment(ctx context.Context, on Item, body string) error {
	if on.Number <= 0 {
		return errors.New("forge: gitlab: comment: no issue or merge request number")
	}
	kind, what := "merge_requests", "merge request !"
	if on.Issue {
		kind, what = "issues", "issue #"
	}
	path := g.projectPath() + "/" + kind + "/" + strconv.Itoa(on.Number) + "/notes"
	return g.c.do(ctx, "comment on "+what+strconv.Itoa(on.Number), http.MethodPost, path, nil, map[string]string{"body": body}, nil)
}

func (g *gitLab) FindComment(ctx context.Context, on Item, marker, author string) (bool, error) {
	if on.Number <= 0 || marker == "" || author == "" {
		return false, errors.New("forge: gitlab: find comment: no issue or merge request number, marker or author")
	}
	kind, what := "merge_requests", "merge request !"
	if on.Issue {
		kind, what = "issues", "issue #"
	}
	path := g.projectPath() + "/" + kind + "/" + strconv.Itoa(on.Number) + "/notes"
	return findComment(ctx, g.c, "read the notes on "+what+strconv.Itoa(on.Number), path, marker, author)
}

func (g *gitLab) Permission(ctx context.Context, user string) (Permission, error) {
	if user == "" {
		return PermNone, nil
	}
	// The members API wants the numeric id of the user.
	var users []struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	}
	if err := g.c.do(ctx, "find user "+user, http.MethodGet, "/users", url.Values{"username": {user}}, nil, &users); err != nil {
		return PermNone, err
	}
	var uid int64
	for _, u := range users {
		if strings.EqualFold(u.Username, user) {
			uid = u.ID
		}
	}
	if uid == 0 {
		return PermNone, nil
	}
	var member struct {
		AccessLevel int `json:"access_level"`
	}
	// members/all includes those who inherit access from a parent group.
	path := g.projectPath() + "/members/all/" + strconv.FormatInt(uid, 10)
	if err := g.c.do(ctx, "read permission of "+user, http.MethodGet, path, nil, nil, &member); err != nil {
		if errors.Is(err, ErrNotFound) {
			return PermNone, nil
		}
		return PermNone, err
	}
	switch l := member.AccessLevel; {
	case l >= glMaintainer:
		return PermAdmin, nil
	case l >= glDeveloper:
		return PermWrite, nil
	case l >= glReporter:
		return PermRead, nil
	}
	// Guests and below read issues, not code.
	return PermNone, nil
}
