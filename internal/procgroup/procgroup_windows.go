//go:build windows

package procgroup

import (
	"errors"
	"os"
	"os/exec"
)

// Detach does nothing on Windows, which has no POSIX sessions or process
// groups; the callers target POSIX systems and only need to compile here.
func Detach(*exec.Cmd) {}

// Kill kills cmd's own process; its children are not tracked on Windows.
func Kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// KillGroup kills the process pid; its children are not tracked on Windows.
func KillGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	err = p.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// Terminate kills the process pid: Windows has no SIGTERM to ask politely.
func Terminate(pid int) error { return KillGroup(pid) }
