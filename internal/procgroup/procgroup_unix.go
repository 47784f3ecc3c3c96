//go:build !windows

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Detach makes cmd, when started, the leader of a new session and process
// group: everything it starts can be killed together with Kill, and it has
// no controlling terminal, so a prompt for a password fails at once instead
// of waiting for an answer nobody will give. Call it before cmd.Start.
func Detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}

// Kill sends SIGKILL to the process group cmd leads. A command that never
// started or a group that is already gone is not an error.
func Kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
