package main

import (
	"errors"
	"fmt"

	"reasonix/agent"
)

// Exit codes of reasonix commands; `run` uses all of them.
const (
	exitOK          = 0   // the task succeeded
	exitFailed      = 1   // the task or the command failed
	exitUsage       = 2   // bad usage or configuration
	exitBlocked     = 3   // a call the task needed was refused, or the goal is blocked
	exitBudget      = 4   // the step limit or a budget was reached
	exitInterrupted = 130 // interrupted by a signal
)

// exitCode maps a run outcome to the process exit code.
func exitCode(o agent.Outcome) int {
	switch o {
	case agent.OutcomeSucceeded:
		return exitOK
	case agent.OutcomeBlocked:
		return exitBlocked
	case agent.OutcomeStepLimit:
		return exitBudget
	case agent.OutcomeInterrupted:
		return exitInterrupted
	default:
		return exitFailed
	}
}

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
