// Command reasonix runs coding agents headless: one task from the command
// line (`reasonix run`), or as a service taking tasks from chat, schedules,
// webhooks and its HTTP API (`reasonix serve`).
//
// This package is the only place that wires concrete providers, tools and
// plugins together; everything below it knows only interfaces.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	_ "reasonix/internal/faultaround" // first: the binary's pages are mapped one at a time
	"reasonix/internal/secretenv"

	_ "reasonix/agent/anthropic" // kind "anthropic": the Messages API
	_ "reasonix/agent/builtin"   // built-in tools register themselves
	_ "reasonix/agent/openai"    // kind "openai": OpenAI-compatible chat completions
	_ "reasonix/agent/responses" // kind "responses": OpenAI's Responses API
)

// version is set at build time through -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// The sandbox's proxy keeps its pages: it lives as long as the run,
	// shares them with it, and faulting them back would cost each step.
	sandboxExec()
	releaseStartPages()
	// In the image sealEnvironment's re-exec fallback started, this takes
	// the secrets back from the descriptor they were handed over on; in
	// any other it detaches the environment from the exec-time block
	// sealEnvironment blanks, and marks the process not dumpable at once
	// when that block holds a secret.
	if err := secretenv.Receive(); err != nil {
		fmt.Fprintf(os.Stderr, "reasonix: %v\n", err)
		os.Exit(exitFailed)
	}
	sealSecrets = true
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

// cli runs one command and returns the process exit code.
func cli(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		args = []string{"version"}
	}
	return reportError(stderr, dispatch(commands(), args, stdout, stderr))
}

// reportError prints err for a person and maps it to an exit code.
func reportError(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, errHelpShown) {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.msg == "" {
		return ee.code // the command has already said why
	}
	// Every problem on its own line, so a configuration with several
	// shows them all at once rather than one per attempt.
	problems := problemsOf(err)
	for _, p := range problems {
		fmt.Fprintf(stderr, "reasonix: %s\n", p)
	}
	var ue *usageError
	if errors.As(err, &ue) {
		hint := "reasonix help"
		var ce *commandError
		if errors.As(err, &ce) && ce.path != "" {
			hint += " " + ce.path
		}
		fmt.Fprintf(stderr, "Run %q for usage.\n", hint)
		return exitUsage
	}
	var ce *configError
	if errors.As(err, &ce) {
		if len(problems) > 1 {
			fmt.Fprintf(stderr, "reasonix: %d problems in the configuration\n", len(problems))
		}
		return exitUsage
	}
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}
