package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

var rebaseOnto = regexp.MustCompile(`merge --no-edit ([0-9a-f]{40})`)

// lastRebaseTarget is the commit the newest rebase instruction in msgs
// names, "" when there is none.
func lastRebaseTarget(msgs []agent.Message) string {
	sha := ""
	for _, m := range msgs {
		if m.Role == agent.RoleUser {
			if got := rebaseOnto.FindStringSubmatch(m.Content); got != nil {
				sha = got[1]
			}
		}
	}
	return sha
}

// TestContinueRebasesAConflictingPR: Two tasks change the same line of
// one file. Ann's pull request is merged on the forge; Bob's task,
// published after that, records that its pull request conflicts with the
// base (result.pr.conflicts, the published event), as the forge itself
// says (result.pr.mergeable). Continuing Bob's task gives it the
// instruction to merge the moved base's commit; the task merges inside
// its sandbox, resolves the conflict, and its end moves the branch of the
// same pull request to a commit that holds the new base and merges
// cleanly, whose diff stat is the pull request's: against the new base,
// without Ann's other file that the merge brought in.
func TestContinueRebasesAConflictingPR(t *testing.T) {
	ctx := context.Background()
	const ident = "GIT_AUTHOR_NAME=Reasonix GIT_AUTHOR_EMAIL=reasonix@localhost GIT_COMMITTER_NAME=Reasonix GIT_COMMITTER_EMAIL=reasonix@localhost "
	rt := newRouter()
	rt.script("greet as ann",
		calls(call("w", "write_file", map[string]string{"path": "README.md", "content": "hello from ann\n"})),
		calls(call("n", "write_file", map[string]string{"path": "NOTES.md", "content": "ann was here\n"})),
		answer("Greeted as ann."))
	var sawSHA string
	bob := rt.script("greet as bob",
		calls(call("w", "write_file", map[string]string{"path": "README.md", "content": "hello from bob\n"})),
		answer("Greeted as bob."),
		// The continuation: rebase onto what the instruction names (it
		// stops at the conflict), resolve, continue.
		agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
			sawSHA = lastRebaseTarget(req.Messages)
			return calls(call("r1", "bash", map[string]string{"command": ident + "git merge --no-edit " + sawSHA}))
		}),
		calls(call("r2", "read_file", map[string]string{"path": "README.md"})),
		calls(call("r3", "write_file", map[string]string{"path": "README.md", "content": "hello from ann and bob\n"})),
		calls(call("r4", "bash", map[string]string{"command": "git add README.md && " + ident + "git commit --no-edit"})),
		answer("Rebased onto the new base."))
	// The task runs git in its sandbox, whose private /tmp would hide a
	// repository under the test's temporary directory: a clone outside it.
	outside, err := os.MkdirTemp(filepath.Join(string(filepath.Separator), "var", "tmp"), "reasonix-rebase-")
	if err != nil {
		t.Skipf("no directory outside /tmp for the repository: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	var b *publishBench
	b = newPublishBench(t, forge.GitHub, rt, func(set *config.Config) {
		clone := exec.Command("git", "clone", "-q", set.Workspaces[0].Repo, filepath.Join(outside, "app"))
		clone.Env = forgetest.GitEnv(t.TempDir())
		if out, err := clone.CombinedOutput(); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		set.Workspaces[0].Repo = filepath.Join(outside, "app")
	})
	submit := func(prompt string) store.Task {
		task, _, err := b.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root", Prompt: prompt, Workspace: "app", Posture: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		done := runnertest.WaitState(t, b.svc, task.ID, time.Minute, store.StateSucceeded, store.StateFailed, store.StateBlocked)
		if done.State != store.StateSucceeded || done.Result == nil || done.Result.PR == nil {
			t.Fatalf("task %q = %s %+v", prompt, done.State, done.Result)
		}
		return done
	}
	ann := submit("greet as ann")
	if len(ann.Result.PR.Conflicts) != 0 || ann.Result.PR.Mergeable != string(forge.MergeClean) {
		t.Fatalf("ann's pull request conflicts before anything moved: %+v", ann.Result.PR)
	}
	// Ann's pull request is merged (a fast-forward of main on the forge).
	annHead := b.git.Ref(t, "refs/heads/reasonix/"+ann.ID)
	merge := exec.Command("git", "-C", b.git.Dir, "update-ref", "refs/heads/main", annHead)
	merge.Env = forgetest.GitEnv(t.TempDir())
	if out, err := merge.CombinedOutput(); err != nil {
		t.Fatalf("merge ann's pull request: %v\n%s", err, out)
	}

	bobTask := submit("greet as bob")
	pr := bobTask.Result.PR
	if !slices.Equal(pr.Conflicts, []string{"README.md"}) || pr.BaseCommit != annHead || pr.Mergeable != string(forge.MergeConflict) {
		t.Fatalf("bob's pull request = %+v, want it to conflict in README.md with base %s, as the forge says", pr, annHead)
	}
	evs := runnertest.Events(t, b.svc, bobTask.ID, "published")
	if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"conflicts":["README.md"]`) {
		t.Fatalf("published events = %v, want the conflict", evs)
	}
	oldHead := b.git.Ref(t, "refs/heads/reasonix/"+bobTask.ID)

	if _, err := b.svc.Message(ctx, bobTask.ID, runner.Principal{ID: "token:root", Role: store.RoleSubmit}, "please rebase"); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, b.svc, bobTask.ID, time.Minute, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || done.Result == nil || done.Result.PR == nil {
		t.Fatalf("continued task = %s %+v", done.State, done.Result)
	}
	if sawSHA != annHead {
		t.Fatalf("the rebase instruction named %q, want the forge's main %s", sawSHA, annHead)
	}
	for _, req := range bob.Requests() {
		for _, m := range req.Messages {
			if m.Role == agent.RoleTool {
				t.Logf("tool %s: %s", m.ToolCallID, m.Content)
			}
		}
	}
	if len(done.Result.PR.Conflicts) != 0 || done.Result.PR.Number != pr.Number || done.Result.PR.Mergeable != string(forge.MergeClean) {
		t.Fatalf("after the rebase: pr %+v, want the same pull request #%d without conflicts", done.Result.PR, pr.Number)
	}
	newHead := b.git.Ref(t, "refs/heads/reasonix/"+bobTask.ID)
	if newHead == "" || newHead == oldHead {
		t.Fatalf("bob's branch on the forge = %s, was %s: not replaced", newHead, oldHead)
	}
	// The diff stat is what the pull request shows, against the new base:
	// Bob's README.md, not the NOTES.md the merge of Ann's work brought.
	stat := exec.Command("git", "-C", b.git.Dir, "diff", "--stat", "--no-color", annHead+"..."+newHead)
	stat.Env = forgetest.GitEnv(t.TempDir())
	want, err := stat.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := done.Result.DiffStat; got != strings.TrimRight(string(want), "\n") || strings.Contains(got, "NOTES.md") || !strings.Contains(got, "README.md") {
		t.Errorf("diff stat after the merge continuation = %q, want the pull request's %q", got, want)
	}
	if reports := runnertest.Events(t, b.svc, bobTask.ID, "final_report"); len(reports) == 0 {
		t.Error("no final report")
	} else if last := string(reports[len(reports)-1].Payload); strings.Contains(last, "NOTES.md") {
		t.Errorf("the last final report counts the merged base's files: %s", last)
	}
	// The new head holds the merged base and the old head, with the
	// resolved file.
	for _, c := range []string{annHead, oldHead} {
		anc := exec.Command("git", "-C", b.git.Dir, "merge-base", "--is-ancestor", c, newHead)
		anc.Env = forgetest.GitEnv(t.TempDir())
		if out, err := anc.CombinedOutput(); err != nil {
			t.Errorf("%s is not in the new head %s: %v %s", c, newHead, err, out)
		}
	}
	show := exec.Command("git", "-C", b.git.Dir, "show", newHead+":README.md")
	show.Env = forgetest.GitEnv(t.TempDir())
	if out, err := show.Output(); err != nil || string(out) != "hello from ann and bob\n" {
		t.Errorf("README.md on the rebased branch = %q, %v", out, err)
	}
	if prs := b.srv.PRs(); len(prs) != 2 {
		t.Errorf("pull requests = %+v, want ann's and bob's only", prs)
	}
	evs = runnertest.Events(t, b.svc, bobTask.ID, "published")
	var last map[string]any
	if err := json.Unmarshal(evs[len(evs)-1].Payload, &last); err != nil || last["conflicts"] != nil || last["state"] != "pr" {
		t.Errorf("last published event = %s, want the pull request without conflicts", evs[len(evs)-1].Payload)
	}
}
