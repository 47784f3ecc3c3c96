//go:build !windows

package builtin

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/internal/eventually"
)

// jobEnv is testEnv with a run's job table, closed at the end of the test.
func jobEnv(t *testing.T) agent.ToolEnv {
	t.Helper()
	env, _ := testEnv(t)
	env.Jobs = agent.NewJobs()
	t.Cleanup(env.Jobs.Close)
	return env
}

var startedRE = regexp.MustCompile(`started background job (job-\d+) \(process group (\d+)\)`)

// startJob starts command in the background and returns its id and group.
func startJob(t *testing.T, env agent.ToolEnv, command string) (string, int) {
	t.Helper()
	out := mustCall(t, tool(t, env, "bash"), map[string]any{"command": command, "run_in_background": true})
	m := startedRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bash in the background said %q", out)
	}
	pgid, _ := strconv.Atoi(m[2])
	return m[1], pgid
}

// groupGone reports whether no process of the group is left.
func groupGone(pgid int) bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) }

// TestBackgroundJobRunsUntilKilled: the call returns at once with the job's
// id; job_output shows what it printed since the last read while it runs;
// job_kill stops its whole group.
func TestBackgroundJobRunsUntilKilled(t *testing.T) {
	env := jobEnv(t)
	begin := time.Now()
	id, pgid := startJob(t, env, "echo first; (sleep 300 &); sleep 300")
	if took := time.Since(begin); took > 10*time.Second {
		t.Fatalf("starting the job took %s", took)
	}
	read := tool(t, env, "job_output")
	var seen string
	eventually.True(t, 10*time.Second, func() bool {
		seen += mustCall(t, read, map[string]any{"job_id": id})
		return strings.Contains(seen, "first")
	}, "the job's output")
	if !strings.Contains(seen, id+" (echo first;") || !strings.Contains(seen, "running for") {
		t.Fatalf("job_output = %q", seen)
	}
	if again := mustCall(t, read, map[string]any{"job_id": id}); !strings.Contains(again, "(no new output)") {
		t.Fatalf("a second read repeated output: %q", again)
	}
	if groupGone(pgid) {
		t.Fatal("the job's group is gone before it was killed")
	}
	out := mustCall(t, tool(t, env, "job_kill"), map[string]any{"job_id": id})
	if !strings.Contains(out, "killed after") {
		t.Fatalf("job_kill = %q", out)
	}
	eventually.True(t, 10*time.Second, func() bool { return groupGone(pgid) }, "the job's process group to go")
}

// TestBackgroundJobExitStatus: job_output with wait_seconds waits for the
// job to exit and reports its code with the rest of its output.
func TestBackgroundJobExitStatus(t *testing.T) {
	env := jobEnv(t)
	id, _ := startJob(t, env, "sleep 0.2; echo done; exit 4")
	out := mustCall(t, tool(t, env, "job_output"), map[string]any{"job_id": id, "wait_seconds": 30})
	if !strings.Contains(out, "exited with code 4") || !strings.Contains(out, "done") {
		t.Fatalf("job_output = %q", out)
	}
	wantErr(t, tool(t, env, "job_output"), map[string]any{"job_id": "job-7"}, `no job "job-7"`, "job-1")
}

// TestEndOfRunStopsItsJobs: closing the run's table (the run ended,
// was cancelled or drained) kills every job still running, and no new one
// can start.
func TestEndOfRunStopsItsJobs(t *testing.T) {
	env := jobEnv(t)
	_, a := startJob(t, env, "sleep 300")
	_, b := startJob(t, env, "sleep 300 & wait")
	env.Jobs.Close()
	for _, pgid := range []int{a, b} {
		if !groupGone(pgid) {
			t.Errorf("process group %d outlived the run", pgid)
		}
	}
	wantErr(t, tool(t, env, "bash"), map[string]any{"command": "true", "run_in_background": true}, "the run has ended")
}

// TestBackgroundNeedsAJobTable: a run without one (an MCP host, a test)
// refuses background commands with a way forward.
func TestBackgroundNeedsAJobTable(t *testing.T) {
	env, _ := testEnv(t)
	wantErr(t, tool(t, env, "bash"), map[string]any{"command": "true", "run_in_background": true}, "run the command in the foreground")
}

// TestJobOutputIsBounded: a job that prints far more than a read holds
// keeps the newest output, says how much it dropped, and hands the rest out
// read by read.
func TestJobOutputIsBounded(t *testing.T) {
	env := jobEnv(t)
	id, _ := startJob(t, env, "head -c 1000000 /dev/zero | tr '\\0' x")
	first := mustCall(t, tool(t, env, "job_output"), map[string]any{"job_id": id, "wait_seconds": 30})
	if !strings.Contains(first, "bytes of older output were dropped") || !strings.Contains(first, "more bytes of output") ||
		len(first) > agent.MaxToolResult {
		t.Fatalf("first read: %d bytes, %q…", len(first), first[:200])
	}
	// The output is a run of x; the status lines hold single ones.
	runs := regexp.MustCompile(`x{2,}`)
	count := func(s string) int { return len(strings.Join(runs.FindAllString(s, -1), "")) }
	total := count(first)
	for range 20 {
		out := mustCall(t, tool(t, env, "job_output"), map[string]any{"job_id": id})
		total += count(out)
		if !strings.Contains(out, "more bytes") {
			break
		}
	}
	if total != jobKeep {
		t.Fatalf("read %d bytes of the kept output, want %d", total, jobKeep)
	}
}

// BenchmarkBashStart compares starting a command in the background with
// running it in the foreground (`true`: the spawn is all there is).
func BenchmarkBashStart(b *testing.B) {
	for _, mode := range []string{"foreground", "background"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			env := agent.ToolEnv{Workdir: dir, Paths: &rootGuard{root: dir, hidden: map[string]bool{}}, Jobs: agent.NewJobs()}
			defer env.Jobs.Close()
			bash := &bash{env: env}
			args := []byte(`{"command":"true","run_in_background":` + strconv.FormatBool(mode == "background") + `}`)
			for b.Loop() {
				if _, err := bash.Execute(b.Context(), args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
