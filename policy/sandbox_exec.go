package policy

import (
	"os"
)

// SandboxExecMain must be the first thing main does in any executable
// whose Confinements should use Landlock and the seccomp supervisor.
// Started as the supervisor's proxy (see supervisor_linux.go), it runs
// that and exits. Otherwise it records that this executable can act as
// the proxy and returns at once.
//
// It used to serve a second role, `reasonix __sandbox-exec`: a helper that
// restricted itself with Landlock and exec'd bash. Nothing the supervisor
// watches ran there (no exec deny rules, no socket or metadata checks), and
// every caller starts bash from the restricted thread instead
// (landlockShell.StartShell), so the entry point is gone: a sandbox that is
// only half a sandbox must not be one argument away.
func SandboxExecMain() {
	if len(os.Args) >= 2 && os.Args[1] == superviseArg {
		os.Exit(superviseMain())
	}
	helperWired.Store(true)
}

// execSpec is the sandbox the restricted thread applies to a command.
type execSpec struct {
	dir     string   // the working directory
	tmp     string   // the private TMPDIR
	rw      []string // writable roots
	hide    []string // neither readable nor writable
	network bool     // TCP allowed
	argv    []string // the command
}
