package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"reasonix/internal/procgroup"
)

// setup runs the spec's setup commands in order in dir, each under
// m.setupTimeout, and stops at the first failure.
func (m *Manager) setup(ctx context.Context, s Spec, dir, taskID string) error {
	if len(s.Setup) == 0 {
		return nil
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return &SetupError{Workspace: s.Name, Command: s.Setup[0], Err: fmt.Errorf("bash not found in PATH: install bash or remove setup: %w", err)}
	}
	env := append(append([]string(nil), m.setupEnv...), "REASONIX_TASK_ID="+taskID, "REASONIX_WORKSPACE="+dir)
	for _, c := range s.Setup {
		out, err := m.runSetup(ctx, bash, c, dir, env)
		if err != nil {
			return &SetupError{Workspace: s.Name, Command: c, Output: out, Err: err}
		}
		m.log.Debug("workspace: setup command done", "task", taskID, "command", c)
	}
	return nil
}

// runSetup runs one command with `bash -c` and returns the tail of its
// output. Output goes to a file, not a pipe: Wait then returns as soon as
// bash exits even if something it started keeps the descriptor, and the
// process group is killed right after, so setup leaves nothing running.
func (m *Manager) runSetup(parent context.Context, bash, command, dir string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(parent, m.setupTimeout)
	defer cancel()
	tmpDir := filepath.Join(m.root, "tmp")
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(tmpDir, "setup-*.log")
	if err != nil {
		return "", err
	}
	defer func() {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}()
	cmd := exec.CommandContext(ctx, bash, "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	procgroup.Detach(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd) }
	cmd.WaitDelay = waitDelay
	// Bound to the service like the bash tool: a setup step orphaned by a
	// crash must not keep writing into the worktree.
	started, runErr := procgroup.StartBound(cmd)
	if runErr == nil {
		runErr = cmd.Wait()
	}
	started()
	_ = procgroup.Kill(cmd) // whatever the command left in the background
	switch {
	case parent.Err() != nil:
		runErr = fmt.Errorf("%w (%w)", runErr, parent.Err())
	case ctx.Err() != nil:
		runErr = fmt.Errorf("timed out after %v (raise the setup timeout or make the command faster): %w", m.setupTimeout, ctx.Err())
	}
	return fileTail(f), runErr
}

// fileTail reads the last tailBytes of f.
func fileTail(f *os.File) string {
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-tailBytes, 0)
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	out := tail(buf[:n])
	if off > 0 && out != "" {
		out = "…" + out
	}
	return out
}
