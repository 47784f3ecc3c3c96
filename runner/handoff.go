package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"reasonix/config"
	"reasonix/runner/forge"
	"reasonix/runner/internal/publish"
	"reasonix/runner/store"
)

// Publishing hands a succeeded task's branch over to the forge its
// workspace's [workspaces.publish] names (package publish does the work).
// The task's end records a row in the publish outbox before its terminal
// state; right after that state the finishing worker drives the row, and
// whatever it could not finish (a crash, a forge that was down) a
// maintenance.PublishRetrier on every node finishes later, finding what was already pushed
// and opened rather than repeating it.

// publishSettings is the enabled [workspaces.publish] of workspace name,
// or nil.
func (s *Service) publishSettings(name string) *config.Publish {
	if name == "" {
		return nil
	}
	for i := range s.set.Workspaces {
		if w := &s.set.Workspaces[i]; w.Name == name && w.Publish.Enabled() {
			return w.Publish
		}
	}
	return nil
}

// newPublisher builds the Service's publisher when some workspace
// publishes; nil otherwise.
func (s *Service) newPublisher() (*publish.Publisher, error) {
	for _, w := range s.set.Workspaces {
		if w.Publish.Enabled() {
			return publish.New(publish.Config{Outbox: s.st, Owner: s.node, Logger: s.log})
		}
	}
	return nil, nil
}

// publishAtEnd decides, as a task ends, what becomes of its branch, and
// fills result.Publish (and result.PR): nothing (no publishing, or the
// task did not succeed, unless force: a budget card's "stop and
// publish"); "unchanged" (a task that changed nothing
// publishes nothing, and says so with a published event it returns to
// announce with the end); or it records a pending outbox row and
// publishes it at once, before the end is recorded, so that the result
// and the final report carry the pull request. What fails there is left
// in the row, which the PublishRetrier finishes once the task has ended
// (succeeded, or stopped with "Stop and publish what exists");
// a crash leaves the task running, and the run that takes it over finds
// the same row.
func (s *Service) publishAtEnd(ctx context.Context, t store.Task, state store.State, force bool, wr WorkResult, result *store.Result) []event {
	p := s.publishSettings(t.Workspace)
	if p == nil || s.pub == nil || state != store.StateSucceeded && !force || wr.Branch == "" {
		return nil
	}
	if !wr.Changed {
		result.Publish = "unchanged"
		return []event{{"published", map[string]any{"state": "unchanged", "branch": wr.Branch,
			"reason": "the task changed nothing: no branch was pushed and no pull request opened"}}}
	}
	if _, err := s.st.EnqueuePublish(ctx, t.ID, t.Workspace, wr.Branch, wr.Commit); err != nil {
		ref := newRef()
		s.log.Error("runner: recording the publish", "task", t.ID, "ref", ref, "err", err)
		result.Publish, result.PublishError = "failed", "the publish could not be recorded (ref "+ref+")"
		return []event{{"published", map[string]any{"state": "failed", "branch": wr.Branch, "error": result.PublishError}}}
	}
	result.Publish = "pending"
	s.announce(t.ID) // the run's buffered events go first
	target, err := s.publishTarget(ctx, t, *result, nil)
	if err == nil {
		var out publish.Outcome
		if out, err = s.pub.Drive(ctx, t.ID, target); err == nil {
			if out.Awaiting {
				result.Publish = "awaiting_approval"
				return nil
			}
			publish.Fill(result, out.PR)
			publish.FillConflict(result, out.Conflict)
			return nil
		}
	}
	if !errors.Is(err, store.ErrPublishBusy) {
		ref := newRef()
		s.log.Warn("runner: publishing failed; it is retried", "task", t.ID, "ref", ref, "err", err)
		result.PublishError = "publishing failed and is retried (ref " + ref + ")"
	}
	return nil
}

// drivePublish publishes task id's pending outbox row after its end (the
// PublishRetrier's work); an error wrapping store.ErrPublishBusy means there
// was nothing to do here.
func (s *Service) drivePublish(ctx context.Context, id string) error {
	if s.pub == nil {
		return nil
	}
	t, err := s.st.Task(ctx, id)
	if err != nil {
		return err
	}
	res := new(store.Result)
	if t.Result != nil {
		*res = *t.Result
	}
	target, err := s.publishTarget(ctx, t, *res, res)
	if err != nil {
		return err
	}
	_, err = s.pub.Drive(ctx, id, target)
	if !errors.Is(err, store.ErrPublishBusy) {
		s.hub.Notify(id) // a published event, or a recorded failure, to read
	}
	return err
}

// publishTarget is where and how task t, whose result is report, is
// published, from its workspace's settings; patch is its stored result to
// update, or nil while the run is still ending (it records the result
// itself).
func (s *Service) publishTarget(ctx context.Context, t store.Task, report store.Result, patch *store.Result) (publish.Target, error) {
	p := s.publishSettings(t.Workspace)
	if p == nil {
		return publish.Target{}, fmt.Errorf("runner: workspace %q of task %s does not publish", t.Workspace, t.ID)
	}
	branches, ok := s.cfg.Workspaces.(WorkspaceBranches)
	if !ok {
		return publish.Target{}, errors.New("runner: the workspaces cannot reach task branches; nothing to publish from")
	}
	gitDir, err := branches.GitDir(t.ID)
	if err != nil {
		return publish.Target{}, fmt.Errorf("runner: publish task %s: %w", t.ID, err)
	}
	f, token, err := s.forgeOf(p)
	if err != nil {
		return publish.Target{}, fmt.Errorf("runner: publish task %s: %w", t.ID, err)
	}
	target := publish.Target{
		Forge: f, Kind: forge.Kind(p.Forge), Token: token, PushURL: p.PushURL, GitDir: gitDir,
		Mode: p.Mode, Base: p.Base, Labels: p.Labels,
		Title: prTitle(t.Prompt), Body: s.prBody(ctx, t, report),
		Result: patch,
		Event: func(typ string, payload any) (store.EventInput, error) {
			raw, err := s.encodeEvent(typ, payload)
			return store.EventInput{Type: typ, Payload: raw}, err
		},
	}
	if p.Mode == config.PublishAsk {
		target.Approve = s.prApproval(t, target.Title, report.DiffStat)
	}
	return target, nil
}

// prTitle is the first line of the task's prompt, bounded.
func prTitle(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	return cmpStr(truncate(strings.TrimSpace(line), 100), "Reasonix task")
}

// prBody is the pull request's description: the task's final report as
// Markdown — summary, diff stat, cost, who asked and from where, each
// approval and who decided it, and the dashboard link. Everything in it
// is already redacted (the result is stored redacted) or is an id.
func (s *Service) prBody(ctx context.Context, t store.Task, res store.Result) string {
	var b strings.Builder
	if ref, ok := s.originIssue(ctx, t); ok {
		b.WriteString(ref.closesLine() + "\n\n")
	}
	if res.Summary != "" {
		b.WriteString(res.Summary + "\n\n")
	}
	if res.DiffStat != "" {
		b.WriteString("```\n" + strings.ReplaceAll(res.DiffStat, "```", "'''") + "\n```\n\n")
	}
	cost := fmt.Sprintf("$%.4f", res.Cost)
	if !res.CostComplete && res.UnpricedTokens > 0 {
		cost += " (incomplete: some models are unpriced)"
	}
	fmt.Fprintf(&b, "- **Asked by** `%s` via %s\n", mdCode(t.Requester), t.Source)
	fmt.Fprintf(&b, "- **Cost** %s, %d tokens in, %d out\n", cost, res.Tokens.Prompt, res.Tokens.Completion)
	if approvals, err := s.st.ListApprovals(ctx, "", t.ID, 50); err == nil {
		for _, a := range approvals {
			if a.Decision == "" {
				continue
			}
			fmt.Fprintf(&b, "- **Approval** `%s` %s: %s by `%s`\n", mdCode(a.Tool), mdCode(truncate(a.Subject, 80)), a.Decision, mdCode(a.DecidedBy))
		}
	}
	if base := strings.TrimRight(s.set.Serve.PublicURL, "/"); base != "" {
		fmt.Fprintf(&b, "- **Task** %s/tasks/%s\n", base, t.ID)
	} else {
		fmt.Fprintf(&b, "- **Task** `%s`\n", t.ID)
	}
	b.WriteString("\n<sub>Opened by Reasonix.</sub>\n")
	return s.redact.String(b.String())
}

// mdCode keeps a value inside its backticks.
func mdCode(v string) string { return strings.ReplaceAll(v, "`", "'") }
