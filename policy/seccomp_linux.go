//go:build linux && (amd64 || arm64)

package policy

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's seccomp user-notification structures (linux/seccomp.h);
// golang.org/x/sys has the ioctl numbers but not the structures.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// ioctlNotifIDValid is SECCOMP_IOCTL_NOTIF_ID_VALID, _IOW('!', 2, __u64),
// which golang.org/x/sys does not define.
const ioctlNotifIDValid = 0x40082102

// filterOpts says which calls a sandbox's filter sends to the supervisor
// and which it refuses on its own.
type filterOpts struct {
	exec     bool // execve, execveat: the deny rules are checked at exec
	metadata bool // chmod, chown, utimes families: refused outside the roots
	network  bool // the sandbox may use the network: UDP and raw sockets stay
}

// seccomp_data offsets for BPF loads.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// Socket families and types the filter inspects.
const (
	afUnspec  = 0
	afInet    = 2
	afInet6   = 10
	afNetlink = 16
	afPacket  = 17
)

// bpfAsm assembles a classic BPF program with symbolic jump targets.
type bpfAsm struct {
	ins    []unix.SockFilter
	labels map[string]int
	fixups []bpfFixup
}

type bpfFixup struct {
	at     int
	jt, jf string
}

func (a *bpfAsm) stmt(code uint16, k uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

// jump emits a conditional jump; an empty label falls through.
func (a *bpfAsm) jump(code uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, bpfFixup{at: len(a.ins), jt: jt, jf: jf})
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

func (a *bpfAsm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *bpfAsm) assemble() ([]unix.SockFilter, error) {
	for _, f := range a.fixups {
		off := func(l string) (uint8, error) {
			if l == "" {
				return 0, nil
			}
			to, ok := a.labels[l]
			d := to - f.at - 1
			if !ok || d < 0 || d > 255 {
				return 0, fmt.Errorf("bpf: bad jump to %q", l)
			}
			return uint8(d), nil
		}
		var err1, err2 error
		a.ins[f.at].Jt, err1 = off(f.jt)
		a.ins[f.at].Jf, err2 = off(f.jf)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
	}
	return a.ins, nil
}

const (
	bpfLdW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfAnd  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K
)

// sandboxFilter builds the program: a call of a foreign architecture
// kills the process (its numbers mean other calls); io_uring is refused
// (its operations bypass seccomp, so a connect through it would escape the
// supervisor); without the network, sockets other than TCP on the
// internet families — UDP (DNS), raw, packet — are refused; the calls the
// supervisor decides on are sent to it; everything else is allowed.
func sandboxFilter(o filterOpts) ([]unix.SockFilter, error) {
	var a bpfAsm
	a.stmt(bpfLdW, offArch)
	a.jump(bpfJeq, auditArch, "", "kill")
	a.stmt(bpfLdW, offNr)
	if x32Bit != 0 {
		a.jump(bpfJge, x32Bit, "enosys", "")
	}
	for _, nr := range []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		a.jump(bpfJeq, nr, "enosys", "")
	}
	notify := []uint32{unix.SYS_CONNECT, unix.SYS_SENDMSG, unix.SYS_SENDMMSG}
	if o.exec {
		notify = append(notify, unix.SYS_EXECVE, unix.SYS_EXECVEAT)
	}
	if o.metadata {
		notify = append(notify, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
			unix.SYS_FCHOWN, unix.SYS_FCHOWNAT, unix.SYS_UTIMENSAT)
		notify = append(notify, legacyMetadataCalls...)
	}
	for _, nr := range notify {
		a.jump(bpfJeq, nr, "notify", "")
	}
	// sendto notifies only with a destination address (args[4] != 0).
	a.jump(bpfJeq, unix.SYS_SENDTO, "", "notsendto")
	a.stmt(bpfLdW, offArgs+4*8)
	a.jump(bpfJeq, 0, "", "notify")
	a.stmt(bpfLdW, offArgs+4*8+4)
	a.jump(bpfJeq, 0, "allow", "notify")
	a.label("notsendto")
	if !o.network {
		a.jump(bpfJeq, unix.SYS_SOCKET, "", "allow")
		a.stmt(bpfLdW, offArgs) // domain
		a.jump(bpfJeq, afPacket, "eacces", "")
		a.jump(bpfJeq, afInet, "inet", "")
		a.jump(bpfJeq, afInet6, "inet", "allow")
		a.label("inet")
		a.stmt(bpfLdW, offArgs+8) // type, with SOCK_NONBLOCK and SOCK_CLOEXEC
		a.stmt(bpfAnd, 0xf)
		a.jump(bpfJeq, unix.SOCK_STREAM, "", "eacces")
		a.stmt(bpfLdW, offArgs+16) // protocol: 0 or TCP (not SCTP, MPTCP)
		a.jump(bpfJeq, 0, "allow", "")
		a.jump(bpfJeq, unix.IPPROTO_TCP, "allow", "eacces")
	}
	a.label("allow")
	a.stmt(bpfRet, unix.SECCOMP_RET_ALLOW)
	a.label("notify")
	a.stmt(bpfRet, unix.SECCOMP_RET_USER_NOTIF)
	a.label("eacces")
	a.stmt(bpfRet, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	a.label("enosys")
	a.stmt(bpfRet, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	a.label("kill")
	a.stmt(bpfRet, unix.SECCOMP_RET_KILL_PROCESS)
	return a.assemble()
}

// installFilter applies the program to the calling thread only (no TSYNC:
// the rest of the service stays unfiltered; children of the thread inherit
// it) and returns the listener of its notifications. The thread must have
// set no_new_privs.
func installFilter(o filterOpts) (int, error) {
	prog, err := sandboxFilter(o)
	if err != nil {
		return -1, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// Once the supervisor has received a call, only a fatal signal ends
	// the caller's wait (Linux 5.19): the supervisor performs connects and
	// sends itself, and a call interrupted and restarted after it acted
	// would send the data twice. Older kernels refuse the flag (EINVAL).
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	if errno == unix.EINVAL {
		fd, _, errno = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
			unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	}
	if errno != 0 {
		return -1, fmt.Errorf("installing the seccomp filter: %w", errno)
	}
	return int(fd), nil
}

func notifRecv(fd uintptr, n *seccompNotif) error {
	*n = seccompNotif{}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, uintptr(unix.SECCOMP_IOCTL_NOTIF_RECV), uintptr(unsafe.Pointer(n)))
	if e != 0 {
		return e
	}
	return nil
}

func notifSend(fd uintptr, r *seccompNotifResp) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, uintptr(unix.SECCOMP_IOCTL_NOTIF_SEND), uintptr(unsafe.Pointer(r)))
	if e != 0 {
		return e
	}
	return nil
}

// notifValid reports whether the notification id is still pending: the
// task has not died (and its pid been reused) since it was received.
func notifValid(fd uintptr, id uint64) bool {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, ioctlNotifIDValid, uintptr(unsafe.Pointer(&id)))
	return e == 0
}
