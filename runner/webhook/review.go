package webhook

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/store"
)

// Reviewer steers a task with a review comment on its pull request;
// *runner.Service is one. A Handler whose Service is a Reviewer hands it
// every verified review delivery (see parseReview) before anything else:
// who may steer, and whether the pull request is a task's at all, is the
// service's to decide.
type Reviewer interface {
	Review(ctx context.Context, r runner.Review) (runner.ReviewOutcome, error)
}

var _ Reviewer = (*runner.Service)(nil)

// Bounds on what a delivery may put in a Review; the service bounds the
// text it feeds a task further.
const (
	maxReviewText = 64 << 10
	maxReviewAttr = 1 << 10
	// maxOriginProject keeps an origin field within what a task's origin
	// holds (runner: 256 bytes).
	maxOriginProject = 200
)

// parseReview reads a review or a comment on a pull request out of a
// verified delivery: GitHub's pull_request_review (submitted),
// pull_request_review_comment (created) and issue_comment (created, on a
// pull request); GitLab's note events on a merge request (not system
// notes). ok is false for anything else, and for a payload without a
// pull request number or an author. Nothing is trusted: the fields are
// copied, bounded, for the service to check.
func parseReview(kind, event string, payload any) (r runner.Review, ok bool) {
	str := func(path ...string) string {
		v, _ := lookup(payload, path)
		s, _ := v.(string)
		return s
	}
	action := str("action")
	switch {
	case kind == config.WebhookGitHub && event == "pull_request_review" && action == "submitted":
		r = runner.Review{Kind: "review", PR: number(payload, "pull_request", "number"),
			Author: str("review", "user", "login"), AuthorIsBot: str("review", "user", "type") == "Bot",
			State: strings.ToLower(str("review", "state")), Body: str("review", "body")}
	case kind == config.WebhookGitHub && event == "pull_request_review_comment" && action == "created":
		r = runner.Review{Kind: "review_comment", PR: number(payload, "pull_request", "number"),
			Author: str("comment", "user", "login"), AuthorIsBot: str("comment", "user", "type") == "Bot",
			Body: str("comment", "body"), Path: str("comment", "path"), Hunk: str("comment", "diff_hunk"),
			Line: number(payload, "comment", "line")}
		if r.Line == 0 {
			r.Line = number(payload, "comment", "original_line")
		}
	case kind == config.WebhookGitHub && event == "issue_comment" && action == "created":
		if pr, isMap := lookupMap(payload, "issue", "pull_request"); !isMap || pr == nil {
			return runner.Review{}, false // a comment on an issue, not a pull request
		}
		r = runner.Review{Kind: "comment", PR: number(payload, "issue", "number"),
			Author: str("comment", "user", "login"), AuthorIsBot: str("comment", "user", "type") == "Bot",
			Body: str("comment", "body")}
	case kind == config.WebhookGitLab && event == "note" && str("object_attributes", "noteable_type") == "MergeRequest":
		system, _ := lookup(payload, []string{"object_attributes", "system"})
		r = runner.Review{Kind: "note", PR: number(payload, "merge_request", "iid"),
			Author: str("user", "username"), AuthorIsBot: system == true,
			Body: str("object_attributes", "note"), Path: str("object_attributes", "position", "new_path"),
			Line: number(payload, "object_attributes", "position", "new_line"),
			Hunk: str("object_attributes", "st_diff", "diff")}
		if r.Path == "" {
			r.Path = str("object_attributes", "position", "old_path")
		}
	default:
		return runner.Review{}, false
	}
	r.Forge = kind
	if kind == config.WebhookGitHub {
		r.Project = str("repository", "full_name")
	} else {
		r.Project = str("project", "path_with_namespace")
	}
	if r.PR <= 0 || r.Author == "" {
		return runner.Review{}, false
	}
	r.Body = clip(r.Body, maxReviewText)
	r.Hunk = clip(r.Hunk, maxReviewText)
	r.Author, r.State, r.Project, r.Path = clip(r.Author, maxReviewAttr), clip(r.State, maxReviewAttr), clip(r.Project, maxReviewAttr), clip(r.Path, maxReviewAttr)
	return r, true
}

// issueOrigin reads the issue a verified issue delivery is about — GitHub
// issues events, GitLab issue events — as the origin keys of the task it
// starts; nil for any other delivery and for a payload without a positive
// issue number or a project.
func issueOrigin(kind, event string, payload any) map[string]string {
	var n int
	var project string
	switch {
	case kind == config.WebhookGitHub && event == "issues":
		n = number(payload, "issue", "number")
		v, _ := lookup(payload, []string{"repository", "full_name"})
		project, _ = v.(string)
	case kind == config.WebhookGitLab && event == "issue":
		n = number(payload, "object_attributes", "iid")
		v, _ := lookup(payload, []string{"project", "path_with_namespace"})
		project, _ = v.(string)
	default:
		return nil
	}
	project = strings.TrimSpace(project)
	if n <= 0 || project == "" || len(project) > maxOriginProject {
		return nil
	}
	return map[string]string{runner.OriginIssue: strconv.Itoa(n), runner.OriginIssueProject: project, runner.OriginIssueForge: kind}
}

// number reads a positive whole JSON number at path; 0 for anything else
// (a string, a fraction, a value beyond what an issue number can be).
func number(payload any, path ...string) int {
	v, _ := lookup(payload, path)
	f, ok := v.(float64)
	if !ok || f < 1 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0
	}
	return int(f)
}

// lookupMap reads the object at path; isMap is false when there is none.
func lookupMap(payload any, path ...string) (map[string]any, bool) {
	v, _ := lookup(payload, path)
	m, isMap := v.(map[string]any)
	return m, isMap
}

// clip cuts s to at most n bytes, at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// review hands a review delivery to the service. handled is false when
// the delivery is no review, or the pull request is no task's: the
// delivery then goes the usual way.
func (h *Handler) review(ctx context.Context, hk *hook, o outcome, event string, payload any, key string) (outcome, bool) {
	rv, ok := h.svc.(Reviewer)
	if !ok {
		return o, false
	}
	r, ok := parseReview(hk.cfg.Kind, event, payload)
	if !ok {
		return o, false
	}
	r.Key = key
	out, err := rv.Review(ctx, r)
	var re *runner.Error
	switch {
	case err == nil && !out.Ours:
		return o, false
	case err == nil && out.Steered:
		h.log.Info("webhook: review comment steers its task", "webhook", hk.cfg.Name, "delivery", o.delivery, "task", out.TaskID)
		o.status, o.kind, o.taskID = http.StatusAccepted, store.DeliveryAccepted, out.TaskID
		o.reason = "the review comment steers its task"
		return o, true
	case err == nil:
		o = ignored(o, out.Reason)
		o.taskID = out.TaskID
		return o, true
	case errors.As(err, &re) && errors.Is(re.Kind, runner.ErrUnavailable):
		return rejected(o, http.StatusServiceUnavailable, re.Message), true
	}
	ref := newRef()
	h.log.Error("webhook: steering with a review comment", "ref", ref, "webhook", hk.cfg.Name, "delivery", o.delivery, "err", err)
	return rejected(o, http.StatusInternalServerError, fmt.Sprintf("the review comment could not be handled; quote ref %s", ref)), true
}
