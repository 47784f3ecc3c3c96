//go:build windows

package builtin

import (
	"errors"
	"os"
	"os/exec"
)

// setProcessGroup does nothing on Windows: there are no POSIX process
// groups. The bash tool targets POSIX systems; this file only keeps the
// package compiling.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the command's own process; its children survive.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
