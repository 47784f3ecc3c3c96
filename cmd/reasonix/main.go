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

	_ "reasonix/agent/builtin" // built-in tools register themselves
	_ "reasonix/agent/openai"  // the OpenAI-compatible provider registers itself
)

// version is set at build time through -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Reasonix runs coding agents headless.

Usage:
  reasonix serve [flags]           run the service: HTTP API, durable task queue, workers
  reasonix run [flags] TASK...     run one task in a workspace and exit
  reasonix tasks list|show|submit|watch|message|cancel|resume
                                   hand the service tasks, follow, steer, cancel and resume them
  reasonix approvals list|allow|deny
                                   decide the calls tasks wait on
  reasonix config check [flags]    load and validate the configuration
  reasonix mcp list [flags]        start the configured MCP servers and list their tools
  reasonix migrate [flags]         bring the database schema up to date
  reasonix doctor [flags]          check configuration, model key, store, git and sandbox
  reasonix version                 print the version

Run "reasonix COMMAND -h" for a command's flags.
`

// cli runs one command and returns the process exit code.
func cli(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "run":
		return runCommand(args[1:], stdout, stderr)
	case "config":
		err = configCommand(args[1:], stdout, stderr)
	case "mcp":
		err = mcpCommand(args[1:], stdout, stderr)
	case "serve":
		err = serveCommand(args[1:], stdout, stderr)
	case "tasks":
		err = tasksCommand(args[1:], stdout, stderr)
	case "approvals":
		err = approvalsCommand(args[1:], stdout, stderr)
	case "migrate":
		err = migrateCommand(args[1:], stdout, stderr)
	case "doctor":
		err = doctorCommand(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "reasonix %s\n", version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = usageErrorf("unknown command %q", args[0])
	}
	return reportError(stderr, err)
}

// reportError prints err for a person and maps it to an exit code.
func reportError(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, errHelpShown) {
		return exitOK
	}
	fmt.Fprintf(stderr, "reasonix: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprint(stderr, "Run \"reasonix help\" for usage.\n")
		return exitUsage
	}
	var ce *configError
	if errors.As(err, &ce) {
		return exitUsage
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}
