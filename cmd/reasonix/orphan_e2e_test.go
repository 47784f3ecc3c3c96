//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
)

// TestServeSIGKILLLeavesNoLateWrite: a tool command that is still running
// when the service is killed writes nothing afterwards, so the commit of the
// resumed task holds no file a dead service's orphan wrote. The shell itself
// dies with the service (Pdeathsig: no f); the subshell it put in the
// background dies with bubblewrap's pid namespace, or, where bash runs
// unsandboxed, is killed by the restarted service from the journal's record
// of its process group (no g).
func TestServeSIGKILLLeavesNoLateWrite(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"write late": func(req agenttest.Request) agenttest.Turn {
			if res := lastToolResult(req); res != "" {
				return answer("resumed: " + res)
			}
			return toolTurn(call("late", "bash", `{"command":"(sleep 6; echo late > g) & sleep 2; echo late > f; wait"}`))
		},
	})...)
	repo := gitRepo(t)
	e.configure(fmt.Sprintf("\n[[workspaces]]\nname = \"app\"\nrepo = %q\n", repo))
	s := e.serve(t)
	id := s.submit("write late", map[string]any{"workspace": "app", "posture": "auto"})
	s.waitFor(func() bool { return strings.Contains(s.events(id), "sleep 6") }, "the command to start")
	// Both sleeps run (the background subshell has started), or the kill
	// would prove nothing about it.
	s.waitFor(func() bool {
		n := 0
		for _, p := range processesIn(e.home) {
			if strings.Contains(p, ":sleep:") {
				n++
			}
		}
		return n == 2
	}, "sleep 6 and sleep 2 to run")
	s.cmd.Process.Kill()
	<-s.done

	s2 := e.serve(t)
	s2.waitState(id, "interrupted")
	// Once no process of the dead service is left, nothing writes any more:
	// one that survived would have written f or g before it ended.
	eventually.NoError(t, 30*time.Second, func() error {
		if left := processesIn(e.home); len(left) > 0 {
			return fmt.Errorf("processes of the dead service still run: %v", left)
		}
		return nil
	})
	if code := s2.call("POST", "/api/v1/tasks/"+id+"/resume", nil, nil); code/100 != 2 {
		t.Fatalf("resume: %d", code)
	}
	got := s2.waitState(id, "succeeded", "failed", "blocked")
	if got.State != "succeeded" || !strings.Contains(got.Result.FinalAnswer, "unknown") {
		t.Fatalf("resumed task = %+v\n%s", got, s2.events(id))
	}
	ls := exec.Command("git", "ls-tree", "-r", "--name-only", "reasonix/"+id)
	ls.Dir = repo
	out, err := ls.CombinedOutput()
	if err != nil {
		t.Fatalf("git ls-tree: %v\n%s", err, out)
	}
	for _, f := range strings.Fields(string(out)) {
		if f == "f" || f == "g" {
			t.Errorf("the task branch holds %s, written after the service died", f)
		}
	}
	// Nor is it waiting in the worktree for a later commit.
	filepath.WalkDir(e.home, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (d.Name() == "f" || d.Name() == "g") {
			t.Errorf("late write found at %s", path)
		}
		return nil
	})
}
