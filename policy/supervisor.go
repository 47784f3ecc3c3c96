package policy

import (
	"slices"
	"sync"
)

// The supervisor (supervisor_linux.go) is the half of the sandbox that
// decides a few system calls one by one, for every process the sandbox
// starts: a seccomp filter on the thread that starts sandboxed bash sends
// them to a goroutine of the service, which looks at the arguments and
// answers. It enforces what Landlock and bubblewrap cannot express:
//
//   - execve/execveat: the executed file (by the name it was called by, the
//     name it resolves to, and its content: a copy of a denied binary is
//     that binary) and its argv are matched against the deny rules
//     (SandboxConfig.ExecDenied); a refused exec fails with EPERM;
//   - connect, sendto, sendmsg and sendmmsg are performed by the supervisor
//     itself, on the caller's own socket (pidfd_getfd), with the address
//     and data it copied once from the caller's memory: another thread of
//     the caller cannot rewrite what was checked before the kernel reads
//     it. A pathname UNIX socket outside the writable roots fails with
//     EACCES unless [sandbox] allow_sockets names it; an internet address
//     fails with EACCES without the network (unless the sandbox has its
//     own network namespace); an abstract address is reached only where
//     Landlock's scope or the sandbox's own network namespace let the
//     caller reach it. Where pidfd_getfd is refused, each of these calls
//     fails with EACCES instead (the supervisor never checks and continues);
//   - chmod, chown and utimes outside the writable roots fail with EPERM
//     (Landlock only: bubblewrap's read-only mounts refuse them already);
//     inside them the supervisor makes the call itself, on the file it
//     checked (supervisor_meta_linux.go).
//
// The filter also refuses, on its own and without a round trip: io_uring
// (whose operations never pass seccomp), and without the network every
// internet socket but TCP (UDP, so DNS; raw; packet sockets).

// supervisorConfig is what the supervisor needs from SandboxConfig.
type supervisorConfig struct {
	execDenied   func(name string, argv []string) (string, bool)
	denyNames    []string
	allowSockets []string
}

// sandboxView is what one sandbox may touch, in the paths its processes
// see: each restricted thread's filter has its own listener and view.
type sandboxView struct {
	roots        []string // writable: sockets there may be connected to, metadata changed
	metadata     bool     // decide chmod/chown/utimes (Landlock)
	denyAbstract bool     // refuse abstract sockets (bubblewrap sharing the host's network)

	// network: the sandbox may use the network (every address family);
	// ownNet: without it, the sandbox still has a network namespace of
	// its own (bubblewrap), whose loopback its internet addresses reach.
	network, ownNet bool

	// self is the filtered thread that starts the sandbox (set by
	// attach). Its own connects and sends are the supervisor's, made on
	// the sandbox's behalf with memory only the service writes.
	self int
	// inDomain runs f on that thread, inside the sandbox's Landlock
	// domain, so the kernel applies the domain's abstract-socket scope to
	// what f connects (nil under bubblewrap, whose network namespace
	// scopes abstract sockets instead).
	inDomain func(f func()) error
}

func (v *sandboxView) writable(p string) bool {
	return slices.ContainsFunc(v.roots, func(r string) bool { return within(p, r) })
}

// maxRefusals bounds the refusals kept for commands nobody asks about
// (one started without the bash tool).
const maxRefusals = 256

// refusalLog keeps what the supervisor refused, with the refused
// process's ancestry, until the bash call whose process is among the
// ancestors takes it for its result. Ancestry rather than the process
// group: bubblewrap starts the sandbox in a session of its own.
type refusalLog struct {
	mu      sync.Mutex
	entries []refusal
}

type refusal struct {
	chain []int // the refused process and its ancestors
	msg   string
}

func (l *refusalLog) add(chain []int, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) >= maxRefusals {
		l.entries = slices.Delete(l.entries, 0, len(l.entries)-maxRefusals+1)
	}
	l.entries = append(l.entries, refusal{chain: chain, msg: msg})
}

// take returns, in order and without repeats, the refusals of pid's
// descendants (and pid's own), and forgets them.
func (l *refusalLog) take(pid int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var msgs []string
	l.entries = slices.DeleteFunc(l.entries, func(r refusal) bool {
		if !slices.Contains(r.chain, pid) {
			return false
		}
		if !slices.Contains(msgs, r.msg) {
			msgs = append(msgs, r.msg)
		}
		return true
	})
	return msgs
}
