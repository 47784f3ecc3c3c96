package main

import (
	"errors"
	"fmt"

	"reasonix/agent"
	"reasonix/runner/session"
)

// Exit codes of reasonix commands (session's table); `run` uses all of them.
const (
	exitOK          = session.ExitSucceeded
	exitFailed      = session.ExitFailed
	exitUsage       = session.ExitUsage
	exitBlocked     = session.ExitBlocked
	exitBudget      = session.ExitBudget
	exitInterrupted = session.ExitInterrupted
)

// exitCode maps a run outcome to the process exit code.
func exitCode(o agent.Outcome) int { return session.ExitCode(session.AgentEnd(o).State) }

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// configError is a configuration that cannot be used; it exits with exitUsage.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// errHelpShown means a command printed its help on request: exit 0 quietly.
var errHelpShown = errors.New("help shown")
