package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/runner/store/storetest"
)

// lostNote is how the note of a take-over that lost changes begins.
const lostNote = "Note from Reasonix, not from the requester"

// TestTakeOverAfterKillTellsWhichChangesAreLost: two nodes on Postgres
// share a workspace repository. A task writes a.txt in its first step; its
// node is killed with SIGKILL while the model thinks about the second step,
// so a.txt, never checkpointed, dies with that node's worktree. The node
// that takes the task over does not let the model believe a.txt exists:
// its first request carries a note naming the lost call, the model (told)
// writes a.txt again, and the second step, which reads a.txt, succeeds. The
// branch ends with both files.
func TestTakeOverAfterKillTellsWhichChangesAreLost(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	const (
		first  = `echo one > a.txt`
		second = `cat a.txt && echo two > b.txt`
	)
	var (
		mu       sync.Mutex
		parked   bool            // the dead node's request for step 2 was held
		resumed  []agent.Message // the taking-over node's first request
		thinking = make(chan struct{})
	)
	script := byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"two writes": func(req agenttest.Request) agenttest.Turn {
			mu.Lock()
			defer mu.Unlock()
			results := map[string]string{} // call id: its result
			noted := false
			for _, m := range req.Messages {
				if m.Role == agent.RoleTool {
					results[m.ToolCallID] = m.Content
				}
				if m.Role == agent.RoleUser && strings.HasPrefix(m.Content, lostNote) {
					noted = true
				}
			}
			_, redone := results["r1"]
			res2, tried := results["s2"]
			switch {
			case len(results) == 0:
				return toolTurn(call("s1", "bash", fmt.Sprintf(`{"command":%q}`, first)))
			case !parked:
				// The first node asks for step 2: it dies while it waits.
				parked = true
				close(thinking)
				return agenttest.Delayed(time.Minute, answer("never sent"))
			case resumed == nil:
				resumed = slices.Clone(req.Messages)
			}
			switch {
			case tried && strings.Contains(res2, "exit code: 0"):
				return answer("both written")
			case tried:
				return answer("step 2 failed: " + res2)
			case noted && !redone:
				// Told that a.txt is gone, a careful model writes it again.
				return toolTurn(call("r1", "bash", fmt.Sprintf(`{"command":%q}`, first)))
			default:
				return toolTurn(call("s2", "bash", fmt.Sprintf(`{"command":%q}`, second)))
			}
		},
	})
	a := newE2E(t, script...)
	b := &e2e{t: t, work: t.TempDir(), srv: a.srv}
	homes := dataDirs(t)
	repo := gitRepo(t)
	for i, e := range []*e2e{a, b} {
		e.home = filepath.Join(homes, fmt.Sprint("node", i))
		if err := os.Mkdir(e.home, 0o700); err != nil {
			t.Fatal(err)
		}
		e.configure(fmt.Sprintf("\n[store]\ndriver = \"postgres\"\ndsn_env = \"RX_TEST_DSN\"\n[serve]\nstale_after = \"3s\"\n"+
			"[[workspaces]]\nname = \"app\"\nrepo = %q\n", repo))
	}
	nodes := []*service{a.serve(t, "RX_TEST_DSN="+dsn), b.serve(t, "RX_TEST_DSN="+dsn)}
	ids := make([]string, 2)
	for i, e := range []*e2e{a, b} {
		id, err := os.ReadFile(filepath.Join(e.home, "node-id"))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = strings.TrimSpace(string(id))
	}

	id := nodes[0].submit("two writes", map[string]any{"workspace": "app", "posture": "auto"})
	select {
	case <-thinking:
	case <-time.After(30 * time.Second):
		t.Fatalf("the first step did not finish\n%s", nodes[0].events(id))
	}
	running := nodesOf(nodes[0].events(id))
	victim := 0
	if running[ids[1]] {
		victim = 1
	}
	nodes[victim].cmd.Process.Kill()
	<-nodes[victim].done
	survivor := nodes[1-victim]

	got := survivor.waitState(id, "succeeded", "failed", "blocked", "interrupted")
	evs := survivor.events(id)
	mu.Lock()
	req := resumed
	mu.Unlock()
	var note string
	for _, m := range req {
		if m.Role == agent.RoleUser && strings.HasPrefix(m.Content, lostNote) {
			note = m.Content
		}
	}
	if note == "" || !strings.Contains(note, first) || strings.Contains(note, second) {
		t.Errorf("the taking-over node's first request does not name the lost call %q alone:\n%+v", first, req)
	}
	if got.State != "succeeded" || got.Result.FinalAnswer != "both written" {
		t.Errorf("task = %s %q\n%s", got.State, got.Result.FinalAnswer, evs)
	}
	if !strings.Contains(evs, `"type":"workspace_changes_lost"`) || !strings.Contains(evs, "stopped responding") {
		t.Errorf("events lack the take-over or the lost changes:\n%s", evs)
	}
	ls := exec.Command("git", "ls-tree", "-r", "--name-only", "reasonix/"+id)
	ls.Dir = repo
	out, err := ls.CombinedOutput()
	if err != nil {
		t.Fatalf("git ls-tree: %v\n%s", err, out)
	}
	if files := strings.Fields(string(out)); !slices.Contains(files, "a.txt") || !slices.Contains(files, "b.txt") {
		t.Errorf("the task branch holds %v, want a.txt and b.txt", files)
	}
}
