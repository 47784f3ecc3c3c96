//go:build !linux

package policy

import (
	"errors"
	"os/exec"
)

type spawners struct{}

// StartShell is unavailable: Landlock exists only on Linux.
func (l *landlockShell) StartShell(*exec.Cmd) error {
	return errors.New("policy: Landlock exists only on Linux")
}

func (s *spawners) stop() {}
