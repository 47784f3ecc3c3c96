//go:build linux

package policy

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"

	"golang.org/x/sys/unix"
)

// StartShell starts cmd (a `bash -c SCRIPT` command, as for the Landlock
// shell) inside bubblewrap. bubblewrap is started from a thread of this
// process that carries the supervisor's seccomp filter, so bubblewrap and
// everything in the sandbox inherit it; without a supervisor it starts
// as WrapShell's argv would.
func (b *bwrapShell) StartShell(cmd *exec.Cmd) error {
	if len(cmd.Args) != 3 || cmd.Args[1] != "-c" {
		return errors.New("policy: bubblewrap's StartShell takes a bash -c command")
	}
	argv := b.argv(cmd.Dir, cmd.Args[2], b.extra)
	cmd.Path, cmd.Args, cmd.Err = argv[0], argv, nil
	if b.conf.sup == nil {
		return cmd.Start()
	}
	sp := b.conf.spawn.get(func(*spawner) error {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
		return b.conf.supervise(b.view(), b.network)
	})
	if err := sp.start(cmd); err != nil {
		return fmt.Errorf("policy: sandboxed bash: %w", err)
	}
	return nil
}

// view is what the supervisor lets a bubblewrap sandbox reach, in the
// sandbox's own paths: the bound writable roots and its private /tmp.
// Metadata calls are left to the read-only mounts; abstract sockets are
// refused when the sandbox shares the host's network namespace (they are
// the host's then). Without the network the sandbox's internet addresses
// are its own namespace's loopback, which the supervisor may connect
// (on the caller's socket, so in that namespace).
func (b *bwrapShell) view() *sandboxView {
	roots := append(append(slices.Clone(b.conf.writable), b.conf.gitShared...), "/tmp")
	return &sandboxView{roots: roots, denyAbstract: b.network, ownNet: !b.network}
}

// TakeRefusals returns what the supervisor refused process pid and its
// descendants (see agent.ShellRefusals), and forgets it.
func (b *bwrapShell) TakeRefusals(pid int) []string { return b.conf.takeRefusals(pid) }
