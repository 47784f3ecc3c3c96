package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"reasonix/runner/forge"
	"reasonix/runner/store"
)

// Tasks of one repository run side by side (max_parallel), so a task's
// base can move on the forge while it works — another task's pull request
// was merged — and its own request then conflicts. Publishing checks this
// after the request is found or opened: it fetches the base branch from
// the forge with the service's own git (hooks off, the token as for the
// push) and asks git to merge the task's commit into it without touching
// any worktree (merge-tree). A conflict is recorded in the result and the
// published event; the pull request itself shows it on the forge. A task
// continued after that is told to rebase onto the fetched base (Rebase),
// and its next publish replaces the branch with force-with-lease.

// upstreamRef is where the base fetched for a task's check is kept in its
// repository: one ref per task, so tasks of a repository never contend
// for it, and the fetched commit stays reachable for the task's rebase.
func upstreamRef(taskID string) string { return "refs/reasonix/upstream/" + taskID }

// leaseRef holds, while a continued task rebases, the commit its branch
// had on the forge: the only value a forced push may replace.
func leaseRef(taskID string) string { return "refs/reasonix/lease/" + taskID }

// Conflict is what the check found: the base's commit on the forge and the
// files the task's commit conflicts with it in (none: it merges cleanly),
// and what the forge itself says.
type Conflict struct {
	Base  string
	Files []string
	// Forge is the forge's own verdict on merging the pull request
	// (forge.GetPR): "" when it was not asked, forge.MergeUnknown when it
	// had not computed one in time (Config.MergeWait).
	Forge forge.Mergeable
	// DiffStat is `git diff --stat` of the commit against where it
	// branched from Base: what the pull request shows, also after the
	// task merged a moved base. "" when it could not be computed.
	DiffStat string
}

// Conflicting reports whether the pull request conflicts with its base:
// the forge's word when it has one, git's otherwise. The forge decides
// because the pull request is what it shows; git here may have seen the
// base a moment earlier or later, or not at all.
func (c *Conflict) Conflicting() bool {
	switch c.Forge {
	case forge.MergeConflict:
		return true
	case forge.MergeClean:
		return false
	}
	return len(c.Files) > 0
}

// withVerdict joins git's check (nil: it could not run) and the forge's
// verdict; nil when neither knows anything.
func withVerdict(checked *Conflict, verdict forge.Mergeable) *Conflict {
	if checked == nil {
		if verdict == "" || verdict == forge.MergeUnknown {
			return nil
		}
		checked = &Conflict{}
	}
	checked.Forge = verdict
	return checked
}

// forgeMergeable asks the forge whether pull request n merges into its
// base, again while the forge is still computing it, for at most
// Config.MergeWait; MergeUnknown when it had no answer by then, "" when
// it was not asked.
func (p *Publisher) forgeMergeable(ctx context.Context, t Target, n int) forge.Mergeable {
	if t.Forge == nil || n <= 0 || p.cfg.MergeWait < 0 {
		return ""
	}
	deadline := time.Now().Add(p.cfg.MergeWait)
	wait := 100 * time.Millisecond
	for {
		pr, err := t.Forge.GetPR(ctx, n)
		if err != nil {
			p.log.Warn("publish: asking the forge whether the pull request merges", "pr", n, "err", scrub(err.Error(), t.Token))
			return forge.MergeUnknown
		}
		if pr.Mergeable != forge.MergeUnknown && pr.Mergeable != "" {
			return pr.Mergeable
		}
		if time.Now().Add(wait).After(deadline) {
			return forge.MergeUnknown
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return forge.MergeUnknown
		case <-timer.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// maxConflictFiles bounds the files a Conflict names.
const maxConflictFiles = 50

// CheckBase fetches t.Base from t.PushURL into the task's repository and
// reports whether commit merges into it cleanly.
func (p *Publisher) CheckBase(ctx context.Context, t Target, taskID, commit string) (Conflict, error) {
	if t.Base == "" {
		return Conflict{}, errors.New("publish: no base branch to check against")
	}
	// The usual case first, without a fetch: the base has not moved past
	// what the task's commit is built on.
	if head, err := p.remoteHead(ctx, t, t.Base); err == nil && head != "" {
		if _, err := p.local(ctx, t, "merge-base", "--is-ancestor", head, commit); err == nil {
			return Conflict{Base: head, DiffStat: p.diffStat(ctx, t, head, commit)}, nil
		}
	}
	base, err := p.fetchBase(ctx, t, taskID)
	if err != nil {
		return Conflict{}, err
	}
	c := Conflict{Base: base, DiffStat: p.diffStat(ctx, t, base, commit)}
	if _, err := p.local(ctx, t, "merge-base", "--is-ancestor", base, commit); err == nil {
		return c, nil // the task's commit is built on the base: nothing to merge
	}
	out, err := p.local(ctx, t, "merge-tree", "--write-tree", "--name-only", "--no-messages", base, commit)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		// The merged tree's id, then one conflicted file a line.
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, f := range lines[1:] {
			if f = strings.TrimSpace(f); f != "" && len(c.Files) < maxConflictFiles {
				c.Files = append(c.Files, f)
			}
		}
		if len(c.Files) == 0 {
			c.Files = []string{"(unnamed)"}
		}
		return c, nil
	}
	return Conflict{}, fmt.Errorf("publish: merge %s into the base: %w: %s", commit, err, out)
}

// diffStat is the diff stat the pull request of commit into base shows:
// commit against where it branched from base (three dots), so a branch
// that merged a moved base counts only its own changes. The format is the
// workspace's (workspace.Result.DiffStat); "" when git fails.
func (p *Publisher) diffStat(ctx context.Context, t Target, base, commit string) string {
	cmd := exec.CommandContext(ctx, p.cfg.Git, append(append([]string{"-C", t.GitDir}, noExec...),
		"diff", "--stat", "--no-color", "--no-ext-diff", "--no-textconv", base+"..."+commit)...)
	cmd.Env = gitEnv(environ())
	out, err := cmd.Output()
	if err != nil {
		p.log.Warn("publish: the diff stat against the base", "err", err)
		return ""
	}
	return strings.TrimRight(string(out), "\n")
}

// Rebase readies a continued task to rebase onto its moved base: the base
// is fetched again (it may have moved further) and the commit now on the
// forge's task branch, rec.Commit, is remembered as the lease of the next
// push, which may then replace it. It returns the base's commit, the files
// that still conflict and, when the record names a pull request, the
// forge's verdict on it (Conflicting decides).
func (p *Publisher) Rebase(ctx context.Context, t Target, rec store.PublishRecord) (Conflict, error) {
	c, err := p.CheckBase(ctx, t, rec.TaskID, rec.Commit)
	if err != nil {
		return Conflict{}, err
	}
	if rec.PRNumber > 0 {
		c.Forge = p.forgeMergeable(ctx, t, rec.PRNumber)
	}
	if _, err := p.local(ctx, t, "update-ref", leaseRef(rec.TaskID), rec.Commit); err != nil {
		return Conflict{}, fmt.Errorf("publish: remember the lease of %s: %w", rec.TaskID, err)
	}
	return c, nil
}

// lease returns the commit a rebased task's push may replace, or "".
func (p *Publisher) lease(ctx context.Context, t Target, taskID string) string {
	out, err := p.local(ctx, t, "rev-parse", "--verify", "--quiet", leaseRef(taskID))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// dropLease forgets the lease once the push it was for went through.
func (p *Publisher) dropLease(ctx context.Context, t Target, taskID string) {
	if _, err := p.local(ctx, t, "update-ref", "-d", leaseRef(taskID)); err != nil {
		p.log.Warn("publish: forgetting the lease", "task", taskID, "err", err)
	}
}

// fetchBase fetches t.Base from the forge into upstreamRef(taskID) and
// returns its commit.
func (p *Publisher) fetchBase(ctx context.Context, t Target, taskID string) (string, error) {
	if err := p.remote(ctx, t, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc",
		"--no-recurse-submodules", t.PushURL, "+refs/heads/"+t.Base+":"+upstreamRef(taskID)); err != nil {
		return "", fmt.Errorf("publish: fetch the base %s: %w", t.Base, err)
	}
	out, err := p.local(ctx, t, "rev-parse", "--verify", upstreamRef(taskID)+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("publish: read the fetched base: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// remoteHead is the commit branch has at t.PushURL, "" when it has none.
func (p *Publisher) remoteHead(ctx context.Context, t Target, branch string) (string, error) {
	var out bytes.Buffer
	if err := p.remoteOut(ctx, t, &out, "ls-remote", "--heads", t.PushURL, "refs/heads/"+branch); err != nil {
		return "", err
	}
	sha, _, _ := strings.Cut(out.String(), "\t")
	return strings.TrimSpace(sha), nil
}

// local runs git on the task's repository, without the network; it
// returns the output, stderr included.
func (p *Publisher) local(ctx context.Context, t Target, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, p.cfg.Git, append(append([]string{"-C", t.GitDir}, noExec...), args...)...)
	cmd.Env = gitEnv(environ())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (p *Publisher) remote(ctx context.Context, t Target, args ...string) error {
	return p.remoteOut(ctx, t, nil, args...)
}

// remoteOut runs git against t.PushURL as the push does (authHeader);
// stdout goes to w when it is not nil.
func (p *Publisher) remoteOut(ctx context.Context, t Target, w *bytes.Buffer, args ...string) error {
	if t.GitDir == "" || t.PushURL == "" {
		return errors.New("publish: no repository or push URL")
	}
	cmd := exec.CommandContext(ctx, p.cfg.Git, append(append([]string{"-C", t.GitDir}, noExec...), args...)...)
	cmd.Env = authEnv(t)
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errOut, &errOut
	if w != nil {
		cmd.Stdout = w
	}
	if err := cmd.Run(); err != nil {
		text := strings.TrimSpace(errOut.String())
		if len(text) > 1000 {
			text = "…" + text[len(text)-1000:]
		}
		return fmt.Errorf("git %s %s: %v: %s", args[0], redactURL(t.PushURL), err, scrub(text, t.Token))
	}
	return nil
}
