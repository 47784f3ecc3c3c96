//go:build !linux || !(amd64 || arm64)

package policy

import "errors"

const superviseArg = "__sandbox-supervise"

func superviseMain() int { return 125 }

// supervisor is unavailable: seccomp user notification is Linux's, and
// its filter here is written for amd64 and arm64.
type supervisor struct{ log refusalLog }

func supervisorUsable() error {
	return errors.New("the seccomp supervisor needs Linux on amd64 or arm64")
}

func newSupervisor(supervisorConfig) *supervisor { return &supervisor{} }

func (s *supervisor) attach(*sandboxView, bool) error {
	return errors.New("the seccomp supervisor is unavailable here")
}

func (s *supervisor) close() {}

// PidfdGetfdWorks is false: there is no supervisor to use it.
func PidfdGetfdWorks() bool { return false }
