//go:build !linux

package procgroup

import "os/exec"

// startBound has no parent-death signal to ask for outside Linux.
func startBound(cmd *exec.Cmd) (func(), error) { return func() {}, cmd.Start() }

func bindToParent(*exec.Cmd) {}

func identify(pid int) Identity { return Identity{Group: pid} }

// killIdentified kills nothing: without a boot id and a start time a
// reused process number cannot be told apart from the recorded group.
func killIdentified(Identity) (bool, error) { return false, nil }
