//go:build !windows

package builtin

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"reasonix/agent"
)

// TestBashReportsItsProcessGroup: the runner learns the group a command
// leads (to record it in the journal) before the command finishes.
func TestBashReportsItsProcessGroup(t *testing.T) {
	env, _ := testEnv(t)
	b := tool(t, env, "bash")
	var reported []int
	alive := false
	ctx := agent.ContextWithProcessReporter(t.Context(), func(pid int) {
		reported = append(reported, pid)
		alive = syscall.Kill(-pid, 0) == nil
	})
	out, err := b.Execute(ctx, []byte(`{"command":"echo $$; sleep 0.2"}`))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
	if len(reported) != 1 || reported[0] != pid || !alive {
		t.Fatalf("reported %v (group alive at the report: %v), the shell was %d", reported, alive, pid)
	}
}

// containedShell is a wrapper that says nothing of its commands outlives
// them (agent.ShellContained), as the bubblewrap sandbox does.
type containedShell struct{ recordingShell }

func (*containedShell) Contained() bool { return true }

// TestBashInAContainedSandboxReportsNoProcess: a crash leaves nothing of
// a contained command running, so there is no group to record.
func TestBashInAContainedSandboxReportsNoProcess(t *testing.T) {
	env, _ := testEnv(t)
	env.Shell = &containedShell{}
	reported := 0
	ctx := agent.ContextWithProcessReporter(t.Context(), func(int) { reported++ })
	out, err := tool(t, env, "bash").Execute(ctx, []byte(`{"command":"echo hi"}`))
	if err != nil || out != "sandboxed\nhi\nexit code: 0" {
		t.Fatalf("got %q, %v", out, err)
	}
	if reported != 0 {
		t.Fatalf("a contained command reported %d process groups", reported)
	}
}
