package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"reasonix/agent"
	"reasonix/internal/procgroup"
)

const (
	// bashKeep is how much output is kept at each end of a command's output.
	bashKeep = 64 * 1024
	// bashDrainGrace is how long output is still read after the command and
	// its process group are gone, for a process that escaped the group but
	// holds the pipe. After it the pipe is abandoned so the call returns.
	bashDrainGrace = 2 * time.Second
)

func init() {
	agent.RegisterBuiltin("bash", func(env agent.ToolEnv) agent.Tool { return &bash{env: env} })
}

// bash runs a shell command in the workspace.
type bash struct{ env agent.ToolEnv }

func (*bash) Name() string { return "bash" }
func (*bash) Description() string {
	return "Run a bash command in the workspace directory and return its combined stdout and stderr and its exit code. " +
		"Use it for builds, tests, git and package managers; prefer read_file, edit_file, ls, glob and grep for files. " +
		"Stdin is empty, so interactive commands fail: pass flags like --yes. " +
		"Processes the command starts in the background are killed when it finishes. Very long output keeps its start and end. " +
		"For a long build, a test suite or a server to test against, set run_in_background: the call returns a job id at once; " +
		"read the job with job_output and stop it with job_kill (it is stopped when the run ends)."
}

func (*bash) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command line, run with bash -c in the workspace directory."},
    "timeout_seconds": {"type": "integer", "minimum": 1, "description": "Kill the command after this many seconds. Default and upper bound: the run's configured shell timeout. Foreground commands only."},
    "run_in_background": {"type": "boolean", "description": "Start the command as a background job and return its id at once instead of waiting. Default false."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)
}

type bashArgs struct {
	Command         string `json:"command"`
	TimeoutSeconds  int    `json:"timeout_seconds"`
	RunInBackground bool   `json:"run_in_background"`
}

// Execute runs the command. A non-zero exit or a timeout is a normal result
// (the model needs the output to react); the text ends with the exit code
// and, after a timeout, says so. When ctx is cancelled the whole process
// group is killed and Execute returns the output so far together with an
// error wrapping ctx.Err().
func (t *bash) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a bashArgs
	if err := decodeArgs("bash", raw, &a, "command"); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Command) == "" {
		return "", fmt.Errorf("bash: command must not be empty")
	}
	if a.TimeoutSeconds < 0 {
		return "", fmt.Errorf("bash: timeout_seconds must be 1 or more, got %d", a.TimeoutSeconds)
	}
	timeout := a.TimeoutSeconds
	if limit := t.env.BashTimeoutSeconds; limit > 0 && (timeout == 0 || timeout > limit) {
		timeout = limit
	}
	argv := []string{"bash", "-c", a.Command}
	starter, _ := t.env.Shell.(agent.ShellStarter)
	if t.env.Shell != nil && starter == nil {
		wrapped, err := t.env.Shell.WrapShell(t.env.Workdir, a.Command)
		if err != nil {
			return "", fmt.Errorf("bash: %w", err)
		}
		if len(wrapped) == 0 {
			return "", fmt.Errorf("bash: shell wrapper returned an empty command")
		}
		argv = wrapped
	}
	if a.RunInBackground {
		return t.startJob(a.Command, argv, starter)
	}

	runCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
		defer cancel()
	}
	out := newHeadTail(bashKeep)
	// A live output (an editor's terminal showing the command) gets the
	// same bytes as they come; the result below is the same either way.
	var sink io.Writer = out
	runCtx, kill := context.WithCancelCause(runCtx)
	defer kill(nil)
	live := agent.OpenLiveOutput(ctx, a.Command, func() { kill(errKilledLive) })
	if live != nil {
		sink = tee{out, live}
	}
	state, err := runGroup(runCtx, argv, t.env.Workdir, t.env.ShellEnv, sink, starter, t.reporter(ctx))
	if live != nil {
		live.Done(exitStatus(state))
	}
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}

	var b strings.Builder
	b.WriteString(out.String())
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch {
	case ctx.Err() != nil:
		b.WriteString("cancelled: the command and its child processes were killed\n")
	case errors.Is(context.Cause(runCtx), errKilledLive):
		b.WriteString("stopped by the user where it was shown: the command and its child processes were killed\n")
	case runCtx.Err() != nil:
		fmt.Fprintf(&b, "timed out after %ds: the command and its child processes were killed\n", timeout)
	}
	if r, ok := t.env.Shell.(agent.ShellRefusals); ok {
		for _, msg := range r.TakeRefusals(state.Pid()) {
			b.WriteString(msg + "\n")
		}
	}
	fmt.Fprintf(&b, "exit code: %d", state.ExitCode())
	if state.ExitCode() < 0 {
		fmt.Fprintf(&b, " (%s)", state)
	}
	if ctx.Err() != nil {
		return b.String(), fmt.Errorf("bash: command cancelled: %w", ctx.Err())
	}
	return b.String(), nil
}

// errKilledLive is why a command stopped from its live output (a person
// killing the editor's terminal that shows it) ended.
var errKilledLive = errors.New("stopped from its live output")

// tee writes to the result's buffer and to a live output, whose errors are
// not the command's: the result gets every byte whatever the live output
// does.
type tee struct {
	out  io.Writer
	live agent.LiveOutput
}

func (w tee) Write(p []byte) (int, error) {
	_, _ = w.live.Write(p)
	return w.out.Write(p)
}

// exitStatus is a command's exit status as a shell reports it: its exit
// code, 128 + the signal that killed it, or -1 when it did not run.
func exitStatus(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// reporter tells ctx's process reporter about a command's process group, so
// a restarted service can kill what a crash left of it (a background
// process lives on in the group) — unless the sandbox takes all of a
// command down with it (agent.ShellContained).
func (t *bash) reporter(ctx context.Context) func(pid int) {
	if c, ok := t.env.Shell.(agent.ShellContained); ok && c.Contained() {
		return nil
	}
	return func(pid int) { agent.ReportProcess(ctx, pid) }
}

// runGroup runs argv in dir as the leader of a new process group, writing
// stdout and stderr to out. When ctx ends, or when the leader exits, the
// whole group is killed: nothing a command started outlives the call, nor
// the service (procgroup.StartBound). started, when not nil, learns the
// group's leader as soon as it runs (the process reporter: see reporter). The
// output goes through a pipe this function owns (not through os/exec's copy
// goroutines) so that Wait returns when the leader exits even if a
// grandchild still holds the pipe; reading then stops after bashDrainGrace.
// A starter, when not nil, launches the command (from its own confined
// thread) instead of cmd.Start.
func runGroup(ctx context.Context, argv []string, dir string, env []string, out io.Writer, starter agent.ShellStarter, onStart func(pid int)) (*os.ProcessState, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env   // nil inherits the process environment
	cmd.Stdin = nil // os/exec connects /dev/null
	cmd.Stdout, cmd.Stderr = pw, pw
	procgroup.Detach(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd) }
	started := func() {}
	if starter != nil {
		err = procgroup.StartBoundWith(cmd, starter.StartShell)
	} else {
		started, err = procgroup.StartBound(cmd)
	}
	if err != nil {
		_ = pw.Close()
		return nil, err
	}
	// Wait below runs in this goroutine too, as StartBound requires.
	defer started()
	if onStart != nil {
		onStart(cmd.Process.Pid)
	}
	// The child has its own copy; ours must go so EOF arrives when the
	// last process holding the write end exits.
	_ = pw.Close()

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()

	waitErr := cmd.Wait()
	_ = procgroup.Kill(cmd) // background children of a finished command
	if err := pr.SetReadDeadline(time.Now().Add(bashDrainGrace)); err != nil {
		// No deadline support (Windows pipes): closing unblocks the reader.
		timer := time.AfterFunc(bashDrainGrace, func() { _ = pr.Close() })
		defer timer.Stop()
	}
	<-copied

	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && cmd.ProcessState == nil {
		return nil, waitErr
	}
	return cmd.ProcessState, nil
}
