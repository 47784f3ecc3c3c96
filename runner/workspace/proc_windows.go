//go:build windows

package workspace

import "os/exec"

// detach is a no-op on Windows, which has no process groups to create here.
func detach(*exec.Cmd) {}

// killGroup kills the command's process; its children are not tracked.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
