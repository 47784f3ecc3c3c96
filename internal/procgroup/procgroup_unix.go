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
	return KillGroup(cmd.Process.Pid)
}

// KillGroup sends SIGKILL to the process group led by pid; a group that is
// already gone is not an error.
func KillGroup(pid int) error { return signalGroup(pid, syscall.SIGKILL) }

// Terminate asks the process group led by pid to stop (SIGTERM), for a
// graceful stop before KillGroup; a group that is already gone is not an
// error.
func Terminate(pid int) error { return signalGroup(pid, syscall.SIGTERM) }

func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
