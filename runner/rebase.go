package runner

import (
	"context"
	"fmt"
	"strings"

	"reasonix/runner/forge"
	"reasonix/runner/store"
)

// Continuing a task whose pull request conflicts with its base (the base
// moved on the forge while it ran: result.pr.conflicts or the forge's
// result.pr.mergeable, recorded at publish time; the forge is asked again
// here, and its word decides) continues it to bring the branch up to date: before the
// run is queued, the service fetches the base as it stands now into the
// task's repository with its own git (publish.Rebase; nothing the task
// wrote runs), and the task gets one more message saying to merge that
// commit and resolve the conflicts inside its sandbox, where the commit
// is readable. The run's end publishes to the same branch and pull
// request; a task that rebased instead replaces the old commit with
// force-with-lease (and nothing anyone else pushed).

// rebaseRequester is the principal of the rebase instruction.
const rebaseRequester = "forge:base"

// prepareRebase fetches task t's moved base and posts the rebase
// instruction, when t's pull request conflicts with its base. A failure is
// logged: the continuation goes ahead, and its publish records the
// conflict again.
func (s *Service) prepareRebase(ctx context.Context, t store.Task) {
	if s.pub == nil || t.Result == nil || t.Result.PR == nil ||
		len(t.Result.PR.Conflicts) == 0 && t.Result.PR.Mergeable != string(forge.MergeConflict) {
		return
	}
	p := s.publishSettings(t.Workspace)
	if p == nil {
		return
	}
	rec, err := s.st.Publish(ctx, t.ID)
	if err != nil {
		s.log.Warn("runner: rebase: read the publish record", "task", t.ID, "err", err)
		return
	}
	target, err := s.publishTarget(ctx, t, *t.Result, nil)
	if err != nil {
		s.log.Warn("runner: rebase: publish settings", "task", t.ID, "err", err)
		return
	}
	c, err := s.pub.Rebase(ctx, target, rec)
	if err != nil {
		s.log.Warn("runner: rebase: fetch the base", "task", t.ID, "err", err)
		return
	}
	if !c.Conflicting() {
		return // the base moved again and merges cleanly now (the forge's word first)
	}
	msg := rebaseMessage(target.Base, c.Base, c.Files)
	if _, _, err := s.st.PostMessageOnce(ctx, t.ID, rebaseRequester, s.redact.String(msg), "rebase:"+rec.Commit+":"+c.Base); err != nil {
		s.log.Warn("runner: rebase: post the instruction", "task", t.ID, "err", err)
	}
}

// rebaseMessage tells the task to merge base's commit sha and
// resolve the conflicts in files (names from the repository: quoted).
func rebaseMessage(branch, sha string, files []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The base branch %q moved on the forge while this task worked: it is now at commit %s, "+
		"and this task's pull request conflicts with it", branch, sha)
	if len(files) == 0 {
		// The forge says so; git here did not name the files.
		b.WriteString(" (the forge reports the conflict; the merge below shows where).\n")
	} else {
		b.WriteString(" in:\n")
	}
	for _, f := range files {
		fmt.Fprintf(&b, "- %q\n", f)
	}
	// A merge, not a rebase: a rebase in the sandbox cannot finish (it
	// updates refs through the shared repository, which the sandbox may
	// not write), and a merge keeps the pull request's history, so the
	// push stays a fast-forward. No `git -c` and no GIT_EDITOR: the
	// permission policy asks a person for both (they name programs git
	// runs); --no-edit needs no editor.
	id := "GIT_AUTHOR_NAME=Reasonix GIT_AUTHOR_EMAIL=reasonix@localhost GIT_COMMITTER_NAME=Reasonix GIT_COMMITTER_EMAIL=reasonix@localhost "
	fmt.Fprintf(&b, "\nBefore anything else, bring your work up to date with that commit in the worktree (it is "+
		"already in the repository; do not fetch):\n\n"+
		"    %sgit merge --no-edit %s\n\n"+
		"For each conflict: read the file, edit it to keep both sides' intent, `git add` it; then commit the merge with\n\n"+
		"    %sgit commit --no-edit\n\n"+
		"and check that the result still works. When you finish, your branch goes to the same pull request, "+
		"and its conflicts are gone.", id, sha, id)
	return b.String()
}
