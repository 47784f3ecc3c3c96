// Package publish hands a finished task's branch over to a forge, exactly
// once: it pushes the branch with the service's own git and opens one pull
// (merge) request for it, driven by the task's row in the store's publish
// outbox.
//
// Each step is recorded before the next starts, and the step that cannot
// be recorded atomically with its effect is made safe to repeat: pushing
// the same commit again changes nothing, and before opening a pull request
// the forge is asked for one whose head is the task's branch (forge.FindPR)
// — so a publisher that died after the push, or after the forge opened the
// request but before the store heard of it, finds the branch and the
// request when the record is driven again, and never opens a second. The
// record's lease keeps two nodes from driving one record at once.
//
// The forge token reaches git only through the environment of the one
// push it authenticates (an http.extraHeader passed as GIT_CONFIG_*
// variables), never through an argument, a URL, a file in a repository, an
// event or a log line.
package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"reasonix/runner/forge"
	"reasonix/runner/store"
)

// Modes of a Target, as [workspaces.publish] mode names them.
const (
	ModePR     = "pr"
	ModeDraft  = "draft"
	ModeBranch = "branch"
	// ModeAsk opens the pull request only once a person allowed it
	// (Target.Approve); declined, the branch stays pushed without one.
	ModeAsk = "ask"
)

// Approval is what a person said about opening the pull request of a
// ModeAsk target.
type Approval int

// The answers of Target.Approve.
const (
	ApprovalPending Approval = iota // asked, not yet answered (or asked just now)
	ApprovalAllowed
	ApprovalDenied // declined, or nobody answered in time
)

// Point labels a place in Drive where a test may stop it, as a crash
// would (see Config.Hook).
type Point string

// The points, in the order Drive passes them.
const (
	PointClaimed  Point = "claimed"  // the record is leased; nothing pushed
	PointPushed   Point = "pushed"   // the commit is on the forge; the record still says pending
	PointRecorded Point = "recorded" // the record says pushed; no pull request looked for yet
	PointOpened   Point = "opened"   // the forge opened the pull request; the record does not know it
)

// Outbox is the part of the store Drive works through.
type Outbox interface {
	ClaimPublish(ctx context.Context, taskID, owner string, lease time.Duration) (store.PublishRecord, error)
	AdvancePublish(ctx context.Context, p store.PublishRecord, owner string, result *store.Result, evs ...store.EventInput) error
	ReleasePublish(ctx context.Context, p store.PublishRecord, owner string) error
}

var _ Outbox = (*store.Store)(nil)

// DefaultLease bounds how long one Drive may hold a record before another
// publisher may take it over.
const DefaultLease = 2 * time.Minute

// Config configures a Publisher.
type Config struct {
	Outbox Outbox // required
	// Owner names this publisher in leases (the node's name); required.
	Owner string
	// Lease is how long a claim holds; DefaultLease when zero.
	Lease time.Duration
	// Git is the git binary; "git" (from PATH) when empty.
	Git string
	// Hook, when set, is called at each Point; an error stops Drive there
	// and is returned, leaving the record as a crash at that point would
	// (lease included). For tests.
	Hook   func(Point) error
	Logger *slog.Logger
	// MergeWait bounds how long Drive and Rebase ask the forge again
	// whether an open pull request merges into its base while the forge
	// is still computing it (see forge.GetPR); DefaultMergeWait when
	// zero, not asked at all when negative.
	MergeWait time.Duration
}

// DefaultMergeWait is Config.MergeWait's default: GitHub and GitLab
// usually compute a new request's mergeability within a second or two;
// past that, git's own check (CheckBase) decides, and a continuation asks
// the forge again.
const DefaultMergeWait = 2 * time.Second

// Publisher drives publish records. It is safe for concurrent use.
type Publisher struct {
	cfg Config
	log *slog.Logger
}

// New returns a Publisher, or an error naming the missing field.
func New(cfg Config) (*Publisher, error) {
	switch {
	case cfg.Outbox == nil:
		return nil, errors.New("publish: no outbox")
	case cfg.Owner == "":
		return nil, errors.New("publish: no owner")
	}
	cfg.Lease = cmp.Or(cfg.Lease, DefaultLease)
	cfg.MergeWait = cmp.Or(cfg.MergeWait, DefaultMergeWait)
	cfg.Git = cmp.Or(cfg.Git, "git")
	return &Publisher{cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default())}, nil
}

// Target is where and how one task's branch is published: what the
// workspace's [workspaces.publish] and the task's record say.
type Target struct {
	Forge   forge.Forge // nil only with ModeBranch
	Kind    forge.Kind  // decides the user name of the push's basic auth
	Token   string      // authenticates an http(s) push; never logged
	PushURL string      // git URL; its credentials, if any, are the operator's
	GitDir  string      // the repository holding the task's branch
	Mode    string      // ModePR, ModeDraft or ModeBranch
	Base    string      // the branch the pull request targets
	Labels  []string
	Title   string
	Body    string
	// Result, when set, is the task's stored result: Drive stores it again
	// with Publish and PR filled in. Nil leaves the task's result to the
	// caller (a run that publishes before it records its end).
	Result *store.Result
	// Event encodes an event of the task (redacting it as the service
	// redacts every event); nil means plain JSON.
	Event func(typ string, payload any) (store.EventInput, error)
	// Approve, with ModeAsk, asks a person whether the pull request may
	// be opened for rec's commit (the first call asks) and returns the
	// answer so far. Required with ModeAsk.
	Approve func(ctx context.Context, rec store.PublishRecord) (Approval, error)
}

// Outcome is what Drive achieved.
type Outcome struct {
	Record store.PublishRecord
	PR     *forge.PullRequest // nil with ModeBranch
	// Awaiting: with ModeAsk, the branch is pushed and the pull request
	// waits for a person's approval; the record is left pushed, its lease
	// released, for the Drive after the decision.
	Awaiting bool
	// Declined: with ModeAsk, the person said no (or nobody answered);
	// the branch is pushed and no pull request was opened.
	Declined bool
	// Conflict is what checking the commit against the base on the forge
	// found (CheckBase, and the forge's own mergeability of an open pull
	// request); nil when neither could be checked.
	Conflict *Conflict
}

// Drive publishes task's pending record with t: claim it, push its commit
// to its branch, find or open the pull request, and record each step. It
// returns an error wrapping store.ErrPublishBusy when there is nothing to
// do here (another publisher holds the record, it is done, or the task did
// not succeed). On any other error the record is left for the next Drive.
func (p *Publisher) Drive(ctx context.Context, taskID string, t Target) (Outcome, error) {
	rec, err := p.cfg.Outbox.ClaimPublish(ctx, taskID, p.cfg.Owner, p.cfg.Lease)
	if err != nil {
		return Outcome{}, err
	}
	if err := p.hook(PointClaimed); err != nil {
		return Outcome{Record: rec}, err
	}
	if rec.State == store.PublishPending {
		if err := p.push(ctx, t, rec.TaskID, rec.Commit, rec.Branch); err != nil {
			return Outcome{Record: rec}, p.failed(ctx, rec, t, err)
		}
		if err := p.hook(PointPushed); err != nil {
			return Outcome{Record: rec}, err
		}
		rec.State = store.PublishPushed
		if t.Mode != ModeBranch { // branch mode records the end at once, below
			if err := p.cfg.Outbox.AdvancePublish(ctx, rec, p.cfg.Owner, nil); err != nil {
				return Outcome{Record: rec}, err
			}
		}
		if err := p.hook(PointRecorded); err != nil {
			return Outcome{Record: rec}, err
		}
	}
	if t.Mode == ModeBranch {
		rec.State = store.PublishDone
		return Outcome{Record: rec}, p.done(ctx, rec, t, nil, nil)
	}
	if t.Mode == ModeAsk {
		if t.Approve == nil {
			return Outcome{Record: rec}, p.failed(ctx, rec, t, errors.New("publish: mode ask without an approval to ask"))
		}
		switch answer, err := t.Approve(ctx, rec); {
		case err != nil:
			return Outcome{Record: rec}, p.failed(ctx, rec, t, err)
		case answer == ApprovalPending:
			// Waiting for a person is no failed attempt; the record is free
			// for the Drive that follows the decision, on any node.
			return Outcome{Record: rec, Awaiting: true}, p.cfg.Outbox.ReleasePublish(ctx, rec, p.cfg.Owner)
		case answer == ApprovalDenied:
			rec.State = store.PublishDone
			return Outcome{Record: rec, Declined: true}, p.done(ctx, rec, t, nil, nil)
		}
	}
	// The check against the base runs beside the forge's calls: it is
	// git's work on this machine, they are mostly waiting for the forge.
	var conflict <-chan *Conflict
	if t.Base != "" {
		ch := make(chan *Conflict, 1)
		conflict = ch
		go func() {
			c, err := p.CheckBase(ctx, t, rec.TaskID, rec.Commit)
			if err != nil {
				// The request stands either way; a check that could not
				// run says nothing about conflicts.
				p.log.Warn("publish: checking the pull request against its base", "task", rec.TaskID, "err", scrub(err.Error(), t.Token))
				ch <- nil
				return
			}
			ch <- &c
		}()
	}
	pr, err := p.pullRequest(ctx, t, rec)
	verdict := forge.Mergeable("")
	if err == nil && pr.State == forge.PROpen {
		verdict = p.forgeMergeable(ctx, t, pr.Number) // beside git's check, still running
	}
	var checked *Conflict
	if conflict != nil {
		checked = <-conflict
	}
	if err != nil {
		return Outcome{Record: rec}, p.failed(ctx, rec, t, err)
	}
	if err := p.hook(PointOpened); err != nil {
		return Outcome{Record: rec, PR: &pr}, err
	}
	rec.State, rec.PRNumber, rec.PRURL, rec.PRState, rec.Error = store.PublishDone, pr.Number, pr.URL, string(pr.State), ""
	out := Outcome{Record: rec, PR: &pr}
	if pr.State == forge.PROpen {
		out.Conflict = withVerdict(checked, verdict)
	}
	return out, p.done(ctx, rec, t, &pr, out.Conflict)
}

// pullRequest finds the pull request of the record's branch or opens one.
// The look-up comes first every time, not only after a crash: the forge,
// not the record, knows whether one was opened.
func (p *Publisher) pullRequest(ctx context.Context, t Target, rec store.PublishRecord) (forge.PullRequest, error) {
	if t.Forge == nil {
		return forge.PullRequest{}, errors.New("publish: no forge to open the pull request on")
	}
	if pr, found, err := t.Forge.FindPR(ctx, rec.Branch); err != nil {
		return forge.PullRequest{}, err
	} else if found {
		return pr, nil
	}
	pr, err := t.Forge.OpenPR(ctx, forge.PR{Title: t.Title, Body: t.Body, Head: rec.Branch, Base: t.Base,
		Draft: t.Mode == ModeDraft, Labels: t.Labels})
	switch {
	case errors.Is(err, forge.ErrExists):
		// Opened between the look-up and now (by a publisher whose lease
		// ran out): take that one.
		if found, ok, ferr := t.Forge.FindPR(ctx, rec.Branch); ferr == nil && ok {
			return found, nil
		}
		return forge.PullRequest{}, err
	case err != nil && pr.Number > 0:
		// Opened, but a follow-up (labels) failed: the request stands.
		p.log.Warn("publish: pull request opened with a failed follow-up", "task", rec.TaskID, "pr", pr.Number, "err", err)
		return pr, nil
	}
	return pr, err
}

// done records the end: the record, the task's result and the published
// event, together.
func (p *Publisher) done(ctx context.Context, rec store.PublishRecord, t Target, pr *forge.PullRequest, c *Conflict) error {
	var res store.Result
	Fill(&res, pr)
	FillConflict(&res, c)
	payload := map[string]any{"state": res.Publish, "branch": rec.Branch, "commit": rec.Commit}
	if res.PR != nil {
		payload["pr"] = res.PR
	}
	if c != nil && c.Conflicting() {
		payload["conflicts"], payload["base_commit"] = c.Files, c.Base
	}
	ev, err := p.event(t, payload)
	if err != nil {
		return err
	}
	var patch *store.Result
	if t.Result != nil {
		patch = t.Result
		Fill(patch, pr)
		FillConflict(patch, c)
	}
	return p.cfg.Outbox.AdvancePublish(ctx, rec, p.cfg.Owner, patch, ev)
}

// FillConflict records in res what checking against the base found: in
// res.PR the forge's verdict, and the conflicting files and the base's
// commit while the request conflicts (none once it merges); in
// res.DiffStat the diff the pull request shows, against the base it
// merges into.
func FillConflict(res *store.Result, c *Conflict) {
	if c == nil {
		return
	}
	if c.DiffStat != "" {
		res.DiffStat = c.DiffStat
	}
	if res.PR == nil {
		return
	}
	res.PR.Mergeable = string(c.Forge)
	res.PR.Conflicts, res.PR.BaseCommit = nil, ""
	if c.Conflicting() {
		res.PR.Conflicts, res.PR.BaseCommit = c.Files, c.Base
	}
}

// Fill sets res.Publish and res.PR for a finished publish: "pr" with the
// pull request, or "branch" when only the branch was pushed. The CI a
// task waits for (res.PR.CI) stays.
func Fill(res *store.Result, pr *forge.PullRequest) {
	var ci *store.CI
	if res.PR != nil {
		ci = res.PR.CI
	}
	res.Publish, res.PublishError, res.PR = "branch", "", nil
	if pr != nil {
		res.Publish = "pr"
		res.PR = &store.PullRequest{URL: pr.URL, Number: pr.Number, State: string(pr.State)}
	}
	if ci != nil {
		if res.PR == nil {
			res.PR = &store.PullRequest{}
		}
		res.PR.CI = ci
	}
}

// maxAttempts is how many drives a record gets before it is given up.
const maxAttempts = 5

// failed keeps the record for the next Drive, or gives it up after
// maxAttempts; either way it returns cause, with the token removed.
func (p *Publisher) failed(ctx context.Context, rec store.PublishRecord, t Target, cause error) error {
	msg := scrub(cause.Error(), t.Token)
	cause = errors.New(msg)
	if ctx.Err() != nil || rec.Attempts < maxAttempts {
		rec.Error = msg
		if err := p.cfg.Outbox.AdvancePublish(context.WithoutCancel(ctx), rec, p.cfg.Owner, nil); err != nil {
			p.log.Warn("publish: recording a failed attempt", "task", rec.TaskID, "err", err)
		}
		return cause
	}
	rec.State, rec.Error = store.PublishFailed, msg
	var res *store.Result
	if t.Result != nil {
		res = t.Result
		res.Publish, res.PublishError = "failed", msg
	}
	ev, err := p.event(t, map[string]any{"state": "failed", "branch": rec.Branch, "commit": rec.Commit, "error": msg})
	if err != nil {
		return errors.Join(cause, err)
	}
	return errors.Join(cause, p.cfg.Outbox.AdvancePublish(context.WithoutCancel(ctx), rec, p.cfg.Owner, res, ev))
}

func (p *Publisher) event(t Target, payload any) (store.EventInput, error) {
	if t.Event != nil {
		return t.Event("published", payload)
	}
	return plainEvent("published", payload)
}

func (p *Publisher) hook(at Point) error {
	if p.cfg.Hook == nil {
		return nil
	}
	if err := p.cfg.Hook(at); err != nil {
		return fmt.Errorf("publish: stopped at %s: %w", at, err)
	}
	return nil
}

// scrub removes the token, and the basic credentials made of it, from s.
func scrub(s, token string) string {
	if token == "" {
		return s
	}
	for _, secret := range []string{token, basicCredentials(forge.GitHub, token), basicCredentials(forge.GitLab, token)} {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	return s
}

// environ is the process environment, for tests to see what git gets.
var environ = os.Environ
