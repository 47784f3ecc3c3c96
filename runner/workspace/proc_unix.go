//go:build !windows

package workspace

import (
	"errors"
	"os/exec"
	"syscall"
)

// detach starts the command in a new session: it leads its own process
// group, so everything it starts can be killed together, and it has no
// controlling terminal, so ssh or a credential helper fails instead of
// waiting for a password nobody will type.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// killGroup sends SIGKILL to the command's whole process group. A group that
// is already gone is not an error.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
