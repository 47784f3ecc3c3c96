package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"reasonix/config"
	"reasonix/runner/forge"
	"reasonix/runner/store"
)

// Issue to pull request. A forge webhook on an issue (GitHub's issues
// "labeled", GitLab's issue events) starts a task whose origin names the
// issue: the keys below in TaskRequest.Origin, recorded in the task's
// first event with the task itself. When the task's workspace publishes to
// that same project, its pull request says "Fixes #N" (GitLab "Closes
// #N"), and once the task has ended the service comments on the issue,
// once, with the pull request and the outcome; the comment is recorded
// (a post of the task under issueCommentKey), so neither a redelivered
// job nor a restart posts it again.

// Origin keys naming a task's origin issue.
const (
	OriginIssue        = "issue"         // its number (GitLab: iid)
	OriginIssueProject = "issue_project" // owner/repo, or the GitLab project path
	OriginIssueForge   = "issue_forge"   // "github" or "gitlab"
)

// issueCommentKey is the record of the comment on a task's origin issue.
const issueCommentKey = "forge:issue-comment"

// issueRef is a task's origin issue on the forge its workspace publishes to.
type issueRef struct {
	Forge   string
	Project string
	Number  int
	publish *config.Publish
}

// originIssue is task t's origin issue, when it has one on the project its
// workspace publishes to: an issue elsewhere is no business of the token,
// and its number would name another issue here.
func (s *Service) originIssue(ctx context.Context, t store.Task) (issueRef, bool) {
	if t.Source != store.SourceWebhook {
		return issueRef{}, false
	}
	p := s.publishSettings(t.Workspace)
	if p == nil {
		return issueRef{}, false
	}
	evs, err := s.st.Events(ctx, t.ID, 0, 1)
	if err != nil || len(evs) == 0 || evs[0].Type != "task_state" {
		return issueRef{}, false
	}
	var first struct {
		Origin map[string]string `json:"origin"`
	}
	if json.Unmarshal(evs[0].Payload, &first) != nil {
		return issueRef{}, false
	}
	o := first.Origin
	n, err := strconv.Atoi(o[OriginIssue])
	if err != nil || n <= 0 || o[OriginIssueForge] != p.Forge ||
		!strings.EqualFold(strings.Trim(o[OriginIssueProject], "/"), strings.Trim(p.Project, "/")) {
		return issueRef{}, false
	}
	return issueRef{Forge: p.Forge, Project: o[OriginIssueProject], Number: n, publish: p}, true
}

// closesLine is the line of a pull request's body that closes its origin
// issue when it merges.
func (r issueRef) closesLine() string {
	if r.Forge == string(forge.GitLab) {
		return fmt.Sprintf("Closes #%d", r.Number)
	}
	return fmt.Sprintf("Fixes #%d", r.Number)
}

// issueEnded reports whether a task in state has ended for its issue's
// purposes: an interrupted task or one out of budget may be resumed, and
// its comment waits for the end that follows.
func issueEnded(state store.State) bool {
	return state == store.StateSucceeded || state == store.StateFailed || state == store.StateCancelled
}

// followUpIssue comments on the origin issue of task id, once it has
// ended, with its outcome and pull request; it does nothing for a task
// without an origin issue, one still going, or one whose comment is
// recorded — or found on the issue, posted before a crash kept it from
// being recorded. It runs where a task's job ends; an error leaves the job to be
// retried, which comes back here. task is the task as its job read it:
// its source, which never changes, spares a task from elsewhere (most of
// them) reading it again.
func (s *Service) followUpIssue(ctx context.Context, task store.Task) error {
	if task.Source != store.SourceWebhook {
		return nil
	}
	id := task.ID
	t, err := s.st.Task(ctx, id)
	if err != nil || !issueEnded(t.State) || t.Source != store.SourceWebhook {
		return nil
	}
	ref, ok := s.originIssue(ctx, t)
	if !ok {
		return nil
	}
	if _, err := s.st.ChatPost(ctx, id, issueCommentKey); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("runner: the issue comment record of %s: %w", id, err)
	}
	f, _, err := s.forgeOf(ref.publish)
	if err != nil {
		return fmt.Errorf("runner: comment on the issue of %s: %w", id, err)
	}
	// A comment posted before a crash that kept it from being recorded is
	// on the issue already: find it by its task's marker, among the bot's
	// own comments. When the forge will not say who the bot is, post: a
	// second comment after a crash is better than none.
	posted := false
	if bot := s.forgeUser(ctx, t.Workspace, f); bot != "" {
		if posted, err = f.FindComment(ctx, forge.IssueItem(ref.Number), taskMarker(id), bot); err != nil {
			return fmt.Errorf("runner: read the comments on issue #%d of %s: %w", ref.Number, id, err)
		}
	}
	if !posted {
		if err := f.Comment(ctx, forge.IssueItem(ref.Number), s.issueComment(t)); err != nil {
			return fmt.Errorf("runner: comment on issue #%d of %s: %w", ref.Number, id, err)
		}
	}
	if err := s.st.SaveChatPost(ctx, store.ChatPost{TaskID: id, Key: issueCommentKey, Transport: ref.Forge,
		Channel: ref.Project + "#" + strconv.Itoa(ref.Number)}); err != nil {
		// The comment is posted; a retry would post it again. Say so
		// rather than retry.
		s.log.Error("runner: recording the issue comment", "task", id, "err", err)
	}
	s.log.Info("runner: commented on the origin issue", "task", id, "issue", ref.Number)
	return nil
}

// taskMarker is the hidden line that names task id in its issue comment.
func taskMarker(id string) string { return "<!-- reasonix-task: " + id + " -->" }

// issueComment is the comment on a task's origin issue: its outcome, its
// pull request and why it ended so, as Markdown. The result is stored
// redacted; it is redacted again on the way out all the same.
func (s *Service) issueComment(t store.Task) string {
	var b strings.Builder
	res := store.Result{}
	if t.Result != nil {
		res = *t.Result
	}
	fmt.Fprintf(&b, "Reasonix task `%s` %s.\n\n", t.ID, t.State)
	switch {
	case res.PR != nil && res.PR.URL != "":
		fmt.Fprintf(&b, "Pull request: %s", res.PR.URL)
		if res.PR.CI != nil && res.PR.CI.State != "" {
			fmt.Fprintf(&b, " (CI: %s)", res.PR.CI.State)
		}
		b.WriteString("\n\n")
	case res.Publish == "unchanged":
		b.WriteString("It changed nothing, so no pull request was opened.\n\n")
	default:
		b.WriteString("No pull request was opened.\n\n")
	}
	if res.Reason != "" {
		fmt.Fprintf(&b, "%s\n\n", truncate(res.Reason, 1000))
	} else if res.Summary != "" {
		fmt.Fprintf(&b, "%s\n\n", truncate(res.Summary, 2000))
	}
	if base := strings.TrimRight(s.set.Serve.PublicURL, "/"); base != "" {
		fmt.Fprintf(&b, "Task: %s/tasks/%s\n\n", base, t.ID)
	}
	// The bot marker keeps the comment from ever steering anything; the
	// task's marker finds it again after a crash (followUpIssue).
	fmt.Fprintf(&b, "%s\n%s\n", botMarker, taskMarker(t.ID))
	return s.redact.String(b.String())
}
