package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

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
// files the task's commit conflicts with it in (none: it merges cleanly).
type Conflict struct {
	Base  string
	Files []string
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
			return Conflict{Base: head}, nil
		}
	}
	base, err := p.fetchBase(ctx, t, taskID)
	if err != nil {
		return Conflict{}, err
	}
	c := Conflict{Base: base}
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

// Rebase readies a continued task to rebase onto its moved base: the base
// is fetched again (it may have moved further) and the commit now on the
// forge's task branch, rec.Commit, is remembered as the lease of the next
// push, which may then replace it. It returns the base's commit and the
// files that still conflict.
func (p *Publisher) Rebase(ctx context.Context, t Target, rec store.PublishRecord) (Conflict, error) {
	c, err := p.CheckBase(ctx, t, rec.TaskID, rec.Commit)
	if err != nil {
		return Conflict{}, err
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
