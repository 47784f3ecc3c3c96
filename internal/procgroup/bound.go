package procgroup

import "os/exec"

// StartBound starts cmd like cmd.Start, bound to the life of this process:
// on Linux the kernel sends the child SIGKILL (Pdeathsig) when the service
// dies, even by SIGKILL, so a tool's command cannot outlive it and write
// into a workspace nobody watches. Call Detach first; bwrap and other
// wrappers that take their own children down with them are then covered
// whole, and Kill or KillIdentified takes care of a group's other members.
//
// Pdeathsig fires when the *thread* that forked the child exits, not the
// process. Go ends a thread when a goroutine locked to it exits without
// unlocking, so a child started from an arbitrary thread could be killed
// long before its command finished by an unrelated goroutine (a library
// locking a thread to switch namespaces, say). StartBound therefore locks
// the calling goroutine to its thread until done is called; call done once
// after cmd.Wait returned, from the same goroutine. Elsewhere StartBound is
// cmd.Start and done does nothing.
func StartBound(cmd *exec.Cmd) (done func(), err error) { return startBound(cmd) }

// StartBoundWith is StartBound for a command that start launches from a
// thread it owns for longer than the command (a sandbox's confined
// thread): the parent-death signal is asked for, and the calling
// goroutine need not hold its thread.
func StartBoundWith(cmd *exec.Cmd, start func(*exec.Cmd) error) error {
	bindToParent(cmd)
	return start(cmd)
}
