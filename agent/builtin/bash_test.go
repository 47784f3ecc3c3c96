//go:build !windows

package builtin

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/internal/eventually"
)

func TestBashExitCodesAndOutput(t *testing.T) {
	env, _ := testEnv(t)
	b := tool(t, env, "bash")
	got := mustCall(t, b, map[string]any{"command": "echo out; echo err >&2; exit 3"})
	if got != "out\nerr\nexit code: 3" {
		t.Errorf("got %q", got)
	}
	if got := mustCall(t, b, map[string]any{"command": "pwd; cat"}); got != env.Workdir+"\nexit code: 0" {
		t.Errorf("workdir/stdin: got %q", got)
	}
	if got := mustCall(t, b, map[string]any{"command": "printf x"}); got != "x\nexit code: 0" {
		t.Errorf("no trailing newline: got %q", got)
	}
	if got := mustCall(t, b, map[string]any{"command": "kill -9 $$"}); !strings.Contains(got, "exit code: -1 (signal: killed)") {
		t.Errorf("signal: got %q", got)
	}
	wantErr(t, b, map[string]any{"command": "  "}, "must not be empty")
	wantErr(t, b, map[string]any{"command": "true", "timeout_seconds": -1}, "timeout_seconds")
}

// processGone reports whether pid no longer runs. A zombie counts as gone:
// it was killed and only waits for a parent (init) to reap it.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	if runtime.GOOS == "linux" {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		// The state follows the parenthesised command name.
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
			return stat[i+2] == 'Z' || stat[i+2] == 'X'
		}
	}
	return false
}

// waitGone polls for pid to disappear; killing is asynchronous in the kernel.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	// Do not leave a survivor behind a failed test.
	t.Cleanup(func() {
		if !processGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	eventually.True(t, 0, func() bool { return processGone(pid) }, "process %d still runs", pid)
}

func firstLinePID(t *testing.T, out string) int {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("no pid in output %q", out)
	}
	return pid
}

func TestBashTimeoutKillsTheProcessGroup(t *testing.T) {
	env, _ := testEnv(t)
	env.BashTimeoutSeconds = 1 // caps the 60 s the model asks for
	b := tool(t, env, "bash")
	start := time.Now()
	got, err := call(t, b, map[string]any{"command": "sleep 100 & echo $!; sleep 100", "timeout_seconds": 60})
	if err != nil {
		t.Fatalf("timeout is a result, not an error: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	if !strings.Contains(got, "timed out after 1s") || !strings.Contains(got, "exit code: -1") {
		t.Errorf("got %q", got)
	}
	waitGone(t, firstLinePID(t, got))
}

func TestBashKillsBackgroundChildrenWhenDone(t *testing.T) {
	env, _ := testEnv(t)
	start := time.Now()
	got := mustCall(t, tool(t, env, "bash"), map[string]any{"command": "sleep 100 & echo $!"})
	if d := time.Since(start); d >= bashDrainGrace {
		t.Errorf("waited %v for a background child that holds the output pipe", d)
	}
	if !strings.HasSuffix(got, "exit code: 0") {
		t.Errorf("got %q", got)
	}
	waitGone(t, firstLinePID(t, got))
}

func TestBashDoesNotHangOnAnEscapedGrandchild(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	env, _ := testEnv(t)
	start := time.Now()
	// setsid leaves the process group, so the group kill misses it, and it
	// keeps the output pipe open. The loop waits until it has left (field 6
	// of /proc/PID/stat is the session), or the kill could beat it to it.
	got := mustCall(t, tool(t, env, "bash"), map[string]any{
		"command": `setsid sleep 30 & echo $!; while [ "$(cut -d' ' -f6 /proc/$!/stat)" != "$!" ]; do :; done`,
	})
	pid := firstLinePID(t, got)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if processGone(pid) {
		t.Fatal("the escaped grandchild did not survive; the test proves nothing")
	}
	if d := time.Since(start); d > bashDrainGrace+5*time.Second {
		t.Errorf("took %v", d)
	}
	if !strings.HasSuffix(got, "exit code: 0") {
		t.Errorf("got %q", got)
	}
}

func TestBashCancellation(t *testing.T) {
	env, _ := testEnv(t)
	pidFile := filepath.Join(env.Workdir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := tool(t, env, "bash")
	type result struct {
		got string
		err error
	}
	done := make(chan result, 1)
	go func() {
		// "started" goes to the output before the pid file is written, so
		// the cancel below cannot come between the two.
		got, err := b.Execute(ctx, []byte(`{"command":"sleep 100 & echo started; echo $! > pid; sleep 100"}`))
		done <- result{got, err}
	}()
	// Cancel once the grandchild has started.
	eventually.True(t, 0, func() bool {
		b, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(b), "\n")
	}, "the background sleep never wrote its pid")
	cancel()
	r := <-done
	got, err := r.got, r.err
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !strings.Contains(got, "started") || !strings.Contains(got, "cancelled") {
		t.Errorf("got %q", got)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readString(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func TestBashBoundsOutput(t *testing.T) {
	env, _ := testEnv(t)
	got := mustCall(t, tool(t, env, "bash"), map[string]any{
		"command": "echo START; head -c 5000000 /dev/zero | tr '\\0' a; echo; echo END",
	})
	if len(got) > 2*bashKeep+200 {
		t.Errorf("result is %d bytes", len(got))
	}
	for _, want := range []string{"START\n", "bytes of output omitted", "\nEND\nexit code: 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q", want)
		}
	}
}

type recordingShell struct {
	workdir, script string
	err             error
}

func (s *recordingShell) WrapShell(workdir, script string) ([]string, error) {
	s.workdir, s.script = workdir, script
	if s.err != nil {
		return nil, s.err
	}
	return []string{"sh", "-c", "echo sandboxed; " + script}, nil
}

func TestBashUsesTheShellWrapper(t *testing.T) {
	env, _ := testEnv(t)
	sh := &recordingShell{}
	env.Shell = sh
	got := mustCall(t, tool(t, env, "bash"), map[string]any{"command": "echo hi"})
	if got != "sandboxed\nhi\nexit code: 0" {
		t.Errorf("got %q", got)
	}
	if sh.workdir != env.Workdir || sh.script != "echo hi" {
		t.Errorf("wrapper saw %q in %q", sh.script, sh.workdir)
	}
	sh.err = errors.New("sandbox refuses network tools")
	marker := filepath.Join(env.Workdir, "ran")
	wantErr(t, tool(t, env, "bash"), map[string]any{"command": "touch " + marker}, "sandbox refuses")
	if _, err := os.Stat(marker); err == nil {
		t.Error("a refused command ran")
	}
}

func TestBashUsesTheGivenEnvironment(t *testing.T) {
	t.Setenv("REASONIX_TEST_SECRET", "s3cret")
	env, _ := testEnv(t)
	env.ShellEnv = []string{"PATH=" + os.Getenv("PATH"), "VISIBLE=yes"}
	b := tool(t, env, "bash")
	got := mustCall(t, b, map[string]any{"command": `echo "[$VISIBLE][$REASONIX_TEST_SECRET]"`})
	if got != "[yes][]\nexit code: 0" {
		t.Errorf("got %q: the command saw a variable it was not given", got)
	}
}

// refusingStarter starts commands itself and reports a refusal for the
// process it started, as the OS sandbox's supervisor does.
type refusingStarter struct{ started int }

func (*refusingStarter) WrapShell(string, string) ([]string, error) {
	return nil, errors.New("unused: the tool prefers StartShell")
}

func (s *refusingStarter) StartShell(cmd *exec.Cmd) error {
	err := cmd.Start()
	if err == nil {
		s.started = cmd.Process.Pid
	}
	return err
}

func (s *refusingStarter) TakeRefusals(pid int) []string {
	if pid != s.started {
		return nil
	}
	return []string{"rm x: refused by deny rule Bash(rm:*) at exec"}
}

func TestBashResultNamesSandboxRefusals(t *testing.T) {
	env, _ := testEnv(t)
	env.Shell = &refusingStarter{}
	got := mustCall(t, tool(t, env, "bash"), map[string]any{"command": "echo hi; exit 1"})
	if got != "hi\nrm x: refused by deny rule Bash(rm:*) at exec\nexit code: 1" {
		t.Errorf("got %q", got)
	}
}
