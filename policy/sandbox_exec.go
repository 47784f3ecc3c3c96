package policy

import (
	"errors"
	"fmt"
	"os"
)

// SandboxExecArg is the hidden first argument that turns the reasonix
// executable into the sandbox helper. It is not a command: help and
// completion never show it.
const SandboxExecArg = "__sandbox-exec"

// SandboxExecMain must be the first thing main does in any executable
// whose Confinements should use Landlock. Called with SandboxExecArg as
// the first argument, it restricts the process with Landlock as the
// arguments say and execs the command after "--"; it never returns then
// (on an error it prints to stderr and exits 125, so the command never
// runs unconfined). Started as the seccomp supervisor's proxy (see
// supervisor_linux.go), it runs that and exits. Otherwise it records that
// this executable is a sandbox helper and returns at once.
//
// Why a re-exec of the reasonix binary rather than a separate helper: one
// static binary ships, and Landlock must be applied by the process that
// then execs bash (a Go program cannot restrict a child between fork and
// exec before Go 1.28's SysProcAttr support).
func SandboxExecMain() {
	if len(os.Args) >= 2 && os.Args[1] == superviseArg {
		os.Exit(superviseMain())
	}
	if len(os.Args) < 2 || os.Args[1] != SandboxExecArg {
		helperWired.Store(true)
		return
	}
	spec, err := parseExecSpec(os.Args[2:])
	if err == nil {
		err = restrictAndExec(spec) // returns only on failure
	}
	fmt.Fprintf(os.Stderr, "reasonix: sandbox: %v\n", err)
	os.Exit(125)
}

// execSpec is what the helper's arguments say.
type execSpec struct {
	dir     string   // --cd: the working directory
	tmp     string   // --tmp: the private TMPDIR
	rw      []string // --rw: writable roots
	hide    []string // --hide: neither readable nor writable
	network bool     // --network: TCP allowed
	argv    []string // after "--"
}

// args is the helper's command line for s, the inverse of parseExecSpec.
func (s execSpec) args(exe string) []string {
	a := []string{exe, SandboxExecArg, "--cd", s.dir, "--tmp", s.tmp}
	for _, w := range s.rw {
		a = append(a, "--rw", w)
	}
	for _, h := range s.hide {
		a = append(a, "--hide", h)
	}
	if s.network {
		a = append(a, "--network")
	}
	return append(append(a, "--"), s.argv...)
}

func parseExecSpec(args []string) (execSpec, error) {
	var s execSpec
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		if a == "--" {
			s.argv = args
			break
		}
		if a == "--network" {
			s.network = true
			continue
		}
		if len(args) == 0 {
			return s, fmt.Errorf("%s needs a value", a)
		}
		v := args[0]
		args = args[1:]
		switch a {
		case "--cd":
			s.dir = v
		case "--tmp":
			s.tmp = v
		case "--rw":
			s.rw = append(s.rw, v)
		case "--hide":
			s.hide = append(s.hide, v)
		default:
			return s, fmt.Errorf("unknown argument %q", a)
		}
	}
	if len(s.argv) == 0 {
		return s, errors.New("no command after --")
	}
	return s, nil
}
