package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/internal/eventually"
	"reasonix/internal/procgroup"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// orphan starts a process group whose shell exits at once and leaves a
// sleeping member behind, as a crash leaves a tool's background process,
// and returns the group's journal record and the member's pid.
func orphan(t *testing.T) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "sleep 100 & echo $!; read")
	procgroup.Detach(cmd)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(procgroup.Identify(cmd.Process.Pid))
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	member, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("reading the member's pid: %v (%q)", err, line)
	}
	stdin.Close()
	cmd.Wait()
	t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL) })
	return string(rec), member
}

func processGone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(stat), ") Z ")
}

// TestRecoveryKillsOrphanedProcessGroups: at Start, the process groups
// that this node's unfinished tool calls recorded are killed before their
// tasks become interrupted; another node's records are left alone (their
// numbers mean nothing on this machine).
func TestRecoveryKillsOrphanedProcessGroups(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Config{})
	running := func(node, rec string) string {
		task, _, err := st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Requester: "api:a", Prompt: "p", Posture: "auto"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning, &store.StateOpts{LeaseOwner: &node}); err != nil {
			t.Fatal(err)
		}
		if err := st.JournalStart(ctx, task.ID, "2/c1", "bash", "h", `{"command":"sleep 100 &"}`); err != nil {
			t.Fatal(err)
		}
		if err := st.JournalProcess(ctx, task.ID, "2/c1", rec); err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	mineRec, mine := orphan(t)
	theirsRec, theirs := orphan(t)
	mineTask := running("crashed-node", mineRec)
	running("live-node", theirsRec)

	svc := runnertest.Start(t, runnertest.Options{Store: st, Configure: func(c *runner.Config) { c.Node = "crashed-node" }})
	runnertest.WaitState(t, svc, mineTask, 0, store.StateInterrupted)
	eventually.True(t, 5*time.Second, func() bool { return processGone(mine) }, "the orphaned group of this node's crashed call still runs")
	if processGone(theirs) {
		t.Error("the group recorded by another node was killed")
	}
}
