package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"reasonix/internal/procgroup"
)

// process is a stdio server's subprocess. It runs in its own process group
// so that stopping it also ends whatever it spawned, and its stderr is copied
// line by line to the log.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of the child's stdin
	stdout *os.File // our end of the child's stdout

	exited     chan struct{} // closed once the process has been reaped
	exitErr    error         // cmd.Wait's result, set before exited closes
	stderrDone chan struct{} // closed when the stderr copier has finished
	stderrR    *os.File
	closeStdin sync.Once
}

// maxStderrLine bounds one logged stderr line; longer lines are split.
const maxStderrLine = 16 * 1024

// startProcess starts s's command. The child inherits the environment plus
// s.Env, runs in dir when it is not empty, and gets no terminal.
func startProcess(s *ServerConfig, dir string, logger *slog.Logger) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	procgroup.Detach(cmd) // its own group, so Stop can take its children too

	// Our own pipes (rather than exec's) keep cmd.Wait from waiting on copier
	// goroutines, so a grandchild holding a pipe open cannot stall a stop.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("mcp: server %q: %w", s.Name, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("mcp: server %q: %w", s.Name, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("mcp: server %q: %w", s.Name, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("mcp: server %q: start %s: %w", s.Name, s.Command, err)
	}
	closeAll(inR, outW, errW) // the child has its copies

	p := &process{
		cmd: cmd, stdin: inW, stdout: outR, stderrR: errR,
		exited: make(chan struct{}), stderrDone: make(chan struct{}),
	}
	go func() {
		p.exitErr = cmd.Wait()
		close(p.exited)
	}()
	go p.copyStderr(s.Name, logger)
	return p, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

func (p *process) copyStderr(server string, logger *slog.Logger) {
	defer close(p.stderrDone)
	sc := bufio.NewScanner(p.stderrR)
	sc.Buffer(make([]byte, 0, 4096), maxStderrLine)
	for sc.Scan() {
		logger.Info("mcp server stderr", "server", server, "line", sc.Text())
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		logger.Warn("mcp server stderr unreadable", "server", server, "err", err)
	}
}

// pid is the process id, which is also its process group id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exitError describes how the process ended; call it only after exited closed.
func (p *process) exitError() error {
	if p.exitErr == nil {
		return errors.New("exited with status 0")
	}
	return p.exitErr
}

// stop ends the process and everything in its group. It closes stdin (the
// MCP way of asking a stdio server to exit), waits up to grace, then sends
// SIGTERM and, after another grace, SIGKILL to the group. When ctx ends the
// waiting is cut short and the group is killed at once. stop returns once the
// process has been reaped; it is safe to call more than once.
func (p *process) stop(ctx context.Context, grace time.Duration) {
	p.closeStdin.Do(func() { _ = p.stdin.Close() })
	wait := func(d time.Duration) bool {
		if d <= 0 {
			select {
			case <-p.exited:
				return true
			default:
				return false
			}
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
		case <-ctx.Done():
		}
		return false
	}
	if !wait(grace) {
		_ = procgroup.Terminate(p.pid())
		if !wait(grace) {
			_ = procgroup.KillGroup(p.pid())
		}
	}
	<-p.exited
	// The leader is gone; sweep children it left behind in its group.
	_ = procgroup.KillGroup(p.pid())
	_ = p.stdout.Close()
	// A descendant that left the group may still hold stderr; do not wait
	// for it forever.
	t := time.NewTimer(grace + 100*time.Millisecond)
	defer t.Stop()
	select {
	case <-p.stderrDone:
	case <-t.C:
		_ = p.stderrR.Close()
		<-p.stderrDone
	}
	_ = p.stderrR.Close()
}
