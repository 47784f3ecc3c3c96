package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"reasonix/agent"
)

// Background jobs: `bash` with run_in_background starts the command as
// usual (the same sandbox, environment and process group) but returns at
// once with a job id; job_output reads what it printed since the last read
// and job_kill stops it. The run's agent.Jobs stops every job when the run
// ends, so a job never outlives its task's run, and the process group (and,
// in bubblewrap, the pid namespace) never outlives the service.

const (
	// jobKeep is how much unread output a job keeps; older unread output
	// is dropped and counted.
	jobKeep = 256 * 1024
	// jobReadMax is the most one job_output call returns, inside
	// agent.MaxToolResult with room for the status lines.
	jobReadMax = 28 * 1024
	// jobWaitMax bounds job_output's wait_seconds.
	jobWaitMax = 600
)

func init() {
	agent.RegisterBuiltin("job_output", func(env agent.ToolEnv) agent.Tool { return &jobOutputTool{env: env} })
	agent.RegisterBuiltin("job_kill", func(env agent.ToolEnv) agent.Tool { return &jobKill{env: env} })
}

// startJob runs argv (the wrapped form of command) as a background job of
// the run. The job's context is not the call's: the call ends at once,
// the job when it exits, is killed, or the run ends.
func (t *bash) startJob(command string, argv []string, starter agent.ShellStarter) (string, error) {
	if t.env.Jobs == nil {
		return "", errors.New("bash: background jobs are not available in this run; run the command in the foreground")
	}
	ctx, cancel := context.WithCancel(context.Background())
	j := &bgJob{command: command, out: &jobBuffer{}, cancel: cancel, done: make(chan struct{}), started: time.Now()}
	pids := make(chan int, 1)
	go func() {
		defer close(j.done)
		state, err := runGroup(ctx, argv, t.env.Workdir, t.env.ShellEnv, j.out, starter, func(pid int) { pids <- pid })
		j.mu.Lock()
		j.state, j.err, j.ended = state, err, time.Now()
		j.mu.Unlock()
	}()
	var pid int
	select {
	case pid = <-pids:
	case <-j.done:
		select {
		case pid = <-pids: // it started and has already exited
		default:
			cancel()
			return "", fmt.Errorf("bash: %w", j.err)
		}
	}
	id, err := t.env.Jobs.Add(j)
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	return fmt.Sprintf("started background job %s (process group %d): %s\n"+
		"Read its output with job_output and stop it with job_kill; it is stopped when this run ends.", id, pid, command), nil
}

// bgJob is one background command.
type bgJob struct {
	command string
	started time.Time
	out     *jobBuffer
	cancel  context.CancelFunc
	done    chan struct{} // closed when the command and its group are gone

	mu     sync.Mutex
	state  *os.ProcessState
	err    error
	ended  time.Time
	killed bool
}

// Stop kills the job's process group and waits for it to end.
func (j *bgJob) Stop() {
	j.mu.Lock()
	if j.ended.IsZero() {
		j.killed = true
	}
	j.mu.Unlock()
	j.cancel()
	<-j.done
}

// status says whether the job runs, or how it ended.
func (j *bgJob) status(now time.Time) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.ended.IsZero():
		return fmt.Sprintf("running for %s", now.Sub(j.started).Round(time.Second))
	case j.killed:
		return fmt.Sprintf("killed after %s", j.ended.Sub(j.started).Round(10*time.Millisecond))
	case j.err != nil:
		return fmt.Sprintf("failed: %v", j.err)
	}
	return fmt.Sprintf("exited with code %d after %s", j.state.ExitCode(), j.ended.Sub(j.started).Round(10*time.Millisecond))
}

// report is what job_output and job_kill answer: the status, then the
// output printed since the last read.
func (j *bgJob) report(id string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n", id, j.command, j.status(time.Now()))
	text, dropped, more := j.out.take(jobReadMax)
	switch {
	case text == "" && dropped == 0:
		b.WriteString("(no new output)")
	default:
		if dropped > 0 {
			fmt.Fprintf(&b, "[%d bytes of older output were dropped before this read]\n", dropped)
		}
		b.WriteString(text)
		if more > 0 {
			fmt.Fprintf(&b, "\n[%d more bytes of output: call job_output again]", more)
		}
	}
	return b.String()
}

// jobBuffer holds a job's unread output, at most jobKeep bytes: the oldest
// unread bytes go first, and are counted. Safe for concurrent use.
type jobBuffer struct {
	mu      sync.Mutex
	unread  []byte
	dropped int64
}

func (b *jobBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unread = append(b.unread, p...)
	if over := len(b.unread) - jobKeep; over > 0 {
		b.dropped += int64(over)
		b.unread = append(b.unread[:0], b.unread[over:]...)
	}
	return len(p), nil
}

// take returns up to max bytes of unread output (never cutting a UTF-8
// sequence), the bytes dropped since the last take, and how many unread
// bytes remain.
func (b *jobBuffer) take(max int) (text string, dropped int64, more int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(len(b.unread), max)
	for n > 0 && n < len(b.unread) && !utf8.RuneStart(b.unread[n]) {
		n-- // the next read starts on a whole character
	}
	text = string(b.unread[:n])
	b.unread = append(b.unread[:0], b.unread[n:]...)
	dropped, b.dropped = b.dropped, 0
	return text, dropped, len(b.unread)
}

// jobFor finds the run's job id, or says which ids exist.
func jobFor(tool string, env agent.ToolEnv, id string) (*bgJob, error) {
	if env.Jobs == nil {
		return nil, fmt.Errorf("%s: this run has no background jobs", tool)
	}
	if job, ok := env.Jobs.Get(id); ok {
		if j, ok := job.(*bgJob); ok {
			return j, nil
		}
	}
	ids := env.Jobs.IDs()
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: no job %q: this run has started no background job", tool, id)
	}
	return nil, fmt.Errorf("%s: no job %q; this run's jobs: %s", tool, id, strings.Join(ids, ", "))
}

// jobOutputTool reads a background job's new output and status.
type jobOutputTool struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*jobOutputTool)(nil)

func (*jobOutputTool) Name() string   { return "job_output" }
func (*jobOutputTool) ReadOnly() bool { return true }
func (*jobOutputTool) Description() string {
	return "Read what a background job (bash with run_in_background) printed since the last read, and whether it still runs or how it exited. " +
		"wait_seconds waits for the job to exit first (up to that long), e.g. for a build or a test run started in the background."
}

func (*jobOutputTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "job_id": {"type": "string", "description": "The id bash returned, e.g. job-1."},
    "wait_seconds": {"type": "integer", "minimum": 0, "maximum": 600, "description": "Wait up to this many seconds for the job to exit before reading. Default 0: read at once."}
  },
  "required": ["job_id"],
  "additionalProperties": false
}`)
}

type jobOutputArgs struct {
	JobID       string `json:"job_id"`
	WaitSeconds int    `json:"wait_seconds"`
}

func (t *jobOutputTool) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a jobOutputArgs
	if err := decodeArgs("job_output", raw, &a, "job_id"); err != nil {
		return "", err
	}
	if a.WaitSeconds < 0 || a.WaitSeconds > jobWaitMax {
		return "", fmt.Errorf("job_output: wait_seconds must be between 0 and %d, got %d", jobWaitMax, a.WaitSeconds)
	}
	j, err := jobFor("job_output", t.env, a.JobID)
	if err != nil {
		return "", err
	}
	if a.WaitSeconds > 0 {
		timer := time.NewTimer(time.Duration(a.WaitSeconds) * time.Second)
		defer timer.Stop()
		select {
		case <-j.done:
		case <-timer.C:
		case <-ctx.Done():
			return "", fmt.Errorf("job_output: %w", ctx.Err())
		}
	}
	return j.report(a.JobID), nil
}

// jobKill stops a background job. It changes nothing but what the run
// itself started, so it is decided as a reader.
type jobKill struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*jobKill)(nil)

func (*jobKill) Name() string   { return "job_kill" }
func (*jobKill) ReadOnly() bool { return true }
func (*jobKill) Description() string {
	return "Stop a background job (bash with run_in_background) and everything it started, and return its last output. " +
		"Stopping a job that already exited just reads it."
}

func (*jobKill) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "job_id": {"type": "string", "description": "The id bash returned, e.g. job-1."}
  },
  "required": ["job_id"],
  "additionalProperties": false
}`)
}

type jobKillArgs struct {
	JobID string `json:"job_id"`
}

func (t *jobKill) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var a jobKillArgs
	if err := decodeArgs("job_kill", raw, &a, "job_id"); err != nil {
		return "", err
	}
	j, err := jobFor("job_kill", t.env, a.JobID)
	if err != nil {
		return "", err
	}
	j.Stop()
	return j.report(a.JobID), nil
}
