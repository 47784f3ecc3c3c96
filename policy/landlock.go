package policy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
)

// landlockShell runs bash from an OS thread of this process that
// restricted itself with Landlock (StartShell), under the seccomp
// supervisor. Writable: the workspace, the
// allow_write roots, the worktree's own git state and a private TMPDIR;
// readable: everything but forbid_read; TCP connect and bind denied unless
// the network is allowed; signals and abstract UNIX sockets scoped to the
// sandbox.
type landlockShell struct {
	conf    *Confinement
	network bool
	bash    string
}

func newLandlockShell(conf *Confinement, network bool) *landlockShell {
	bash, err := exec.LookPath("bash")
	if err != nil {
		bash = "/bin/bash"
	}
	return &landlockShell{conf: conf, network: network, bash: bash}
}

// errNoHelper: Landlock-sandboxed bash starts only from the restricted,
// supervised thread.
var errNoHelper = errors.New("policy: a Landlock-sandboxed command starts only from the sandbox's own thread (StartShell), where the supervisor watches it; there is no argv that runs it sandboxed")

// WrapShell refuses: an argv would have to name a helper that restricts
// itself and execs bash, outside the supervisor's watch (exec deny rules,
// sockets, metadata). Every caller in this repository prefers StartShell
// (agent.ShellStarter), which the Landlock shell always has.
func (l *landlockShell) WrapShell(string, string) ([]string, error) {
	return nil, errNoHelper
}

// spec is the sandbox StartShell's thread applies.
func (l *landlockShell) spec(workdir, tmp string, argv []string) execSpec {
	return execSpec{
		dir:     workdir,
		tmp:     tmp,
		rw:      append(slices.Clip(l.conf.writable), l.conf.gitShared...),
		hide:    l.conf.forbidden,
		network: l.network,
		argv:    argv,
	}
}

// view is what the supervisor lets the sandbox reach: its writable roots
// and private tmp (Landlock sees the host's paths), with chmod, chown and
// utimes decided there, since Landlock does not confine them. Abstract
// sockets are connected from the sandbox's own thread (inDomain, set by
// StartShell), under Landlock's scope where the kernel has it (ABI 6).
func (l *landlockShell) view(tmp string) *sandboxView {
	roots := append(append(slices.Clone(l.conf.writable), l.conf.gitShared...), tmp)
	return &sandboxView{roots: roots, metadata: true, denyAbstract: landlockABI() < 6}
}

// TakeRefusals returns what the supervisor refused process pid and its
// descendants (see agent.ShellRefusals), and forgets it.
func (l *landlockShell) TakeRefusals(pid int) []string { return l.conf.takeRefusals(pid) }

func (c *Confinement) takeRefusals(pid int) []string {
	if c.sup == nil {
		return nil
	}
	return c.sup.log.take(pid)
}

// helperWired records that this executable calls SandboxExecMain first,
// so it can act as the supervisor's proxy; without it a re-exec would
// start the program anew (a test binary would run its tests again), so
// Landlock is not offered.
var helperWired atomic.Bool

var executableOnce = sync.OnceValues(os.Executable)

// landlockUsable says why Landlock cannot sandbox bash here, or nil.
func landlockUsable(network bool) error {
	if !helperWired.Load() {
		return errors.New("this executable does not act as the sandbox helper")
	}
	if _, err := executableOnce(); err != nil {
		return fmt.Errorf("cannot find this executable: %w", err)
	}
	abi := landlockABI()
	switch {
	case abi < 1:
		return errors.New("the kernel does not offer it")
	case abi < 4 && !network:
		return fmt.Errorf("kernel ABI %d cannot deny the network (4 can)", abi)
	}
	return nil
}
