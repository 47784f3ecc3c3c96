package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"reasonix/agent"
	"reasonix/runner/store"
)

// maxLostListed bounds how many lost calls the note names one by one.
const maxLostListed = 40

// checkpointed records that the effects of every call run r's task
// journaled so far are in the commit just made on its branch (Release or
// Finish). While the run's note about lost changes has not reached the
// conversation (the run was cut first), nothing is marked: the calls it
// names are still missing and the next continuation must hear of them.
// A failure, like that case, only costs precision: a later continuation in
// a fresh worktree names calls as lost although the branch holds them.
func (s *Service) checkpointed(ctx context.Context, r *run) {
	r.mu.Lock()
	untold := r.lostNote != ""
	r.mu.Unlock()
	if untold {
		s.log.Info("runner: checkpoint not recorded: the note on lost changes was not delivered", "task", r.task.ID)
		return
	}
	if err := s.st.MarkCheckpointed(ctx, r.task.ID); err != nil {
		s.log.Warn("runner: record the workspace checkpoint", "task", r.task.ID, "err", err)
	}
}

// lostChanges tells the continuation of a task the truth about its
// workspace. A worktree made anew (ws.Fresh: another node continues the
// task, or its old worktree was broken) holds the task branch as last
// checkpointed; what the calls journaled since then changed died with the
// worktree they ran in — a node killed with kill -9 commits nothing. The
// transcript still says those calls succeeded, so the model is told which
// calls' effects are missing and redoes what it still needs. Read-only
// calls changed nothing and are not named. It returns "" when nothing is
// lost.
func (r *run) lostChanges(ctx context.Context, ws *Workdir, tools *agent.ToolRegistry) (string, error) {
	if ws == nil || !ws.Fresh || ws.Branch == "" {
		return "", nil
	}
	s := r.s
	entries, err := s.st.UncheckpointedCalls(ctx, r.task.ID)
	if err != nil {
		return "", err
	}
	var lost []string
	for _, e := range entries {
		// A tool this run does not have (a sub-agent's, a plugin since
		// removed) counts as a writer: saying too much is safe here.
		if t, ok := tools.Get(e.Tool); ok && agent.IsReadOnly(t) {
			continue
		}
		lost = append(lost, describeCall(e))
	}
	if len(lost) == 0 {
		return "", nil
	}
	s.emitLogged(ctx, r.task.ID, "workspace_changes_lost", map[string]any{"node": s.node, "branch": ws.Branch,
		"calls": len(lost), "lost": lost[:min(len(lost), maxLostListed)]})
	s.log.Warn("runner: the workspace lacks changes of earlier calls", "task", r.task.ID, "calls", len(lost))
	var b strings.Builder
	fmt.Fprintf(&b, "Note from Reasonix, not from the requester: this task continues in a workspace restored from its last checkpoint "+
		"(branch %s as last committed); the run before stopped without saving its later changes (its node stopped, or the "+
		"worktree was lost). Whatever these %d earlier tool calls changed in the workspace is NOT there now, although the "+
		"conversation above reports them as done:\n", ws.Branch, len(lost))
	for _, l := range lost[:min(len(lost), maxLostListed)] {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	if n := len(lost) - maxLostListed; n > 0 {
		fmt.Fprintf(&b, "- and %d more\n", n)
	}
	b.WriteString("Check the workspace and redo what the task still needs before you go on; do not assume those files or changes exist.")
	return s.redact.String(b.String()), nil
}

// describeCall names a journaled call by its tool and the arguments that
// say what it changed (a path, a command); the content written is left
// out.
func describeCall(e store.JournalEntry) string {
	var args map[string]any
	if json.Unmarshal([]byte(e.Args), &args) != nil {
		return e.Tool + " " + clip(e.Args, 200)
	}
	var parts []string
	for _, k := range []string{"path", "new_path", "command"} {
		if v, ok := args[k].(string); ok && v != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", k, clip(v, 200)))
		}
	}
	if len(parts) == 0 {
		return e.Tool + " " + clip(e.Args, 200)
	}
	return e.Tool + " " + strings.Join(parts, " ")
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
