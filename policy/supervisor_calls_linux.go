//go:build linux && (amd64 || arm64)

package policy

import (
	"encoding/binary"
	"fmt"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// onConnect performs connect(2) for the caller (see supervisor_sock_linux.go):
// the address is copied once and decided — a pathname UNIX socket inside
// the writable roots or named by allow_sockets, reached through the
// descriptor of the very file checked; an abstract one where the sandbox
// may reach it; an internet one with the network (or the sandbox's own
// network namespace) — and the supervisor connects the caller's own
// socket (pidfd_getfd) to that copy. A non-blocking socket stays
// non-blocking (the descriptor is the caller's): EINPROGRESS is answered
// and the caller polls its socket as usual.
func (s *supervisor) onConnect(rc syscall.RawConn, n *seccompNotif, v *sandboxView) verdict {
	pid, a := int(n.Pid), n.Data.Args
	if pid == v.self {
		return allowCall // the supervisor's own, from the sandbox's thread (inDomain)
	}
	name, err := readSockaddr(pid, a[1], a[2])
	if err != nil {
		return refuse(errnoOf(err, unix.EFAULT))
	}
	d, why, errno := s.checkDest(pid, name, v, "connect")
	if errno != 0 {
		return s.refuseCall(rc, n, why, errno)
	}
	sockfd := int(int32(a[0]))
	return verdict{async: func() verdict {
		defer d.close()
		sock, vd, ok := s.takeSocket(rc, n, sockfd)
		if !ok {
			return vd
		}
		defer s.dropSocket(sock)
		if e := sockConnect(sock, &d); e != 0 {
			return refuse(e)
		}
		return verdict{}
	}}
}

// refuseCall fails notification n with errno, recording why (if set) for
// the bash call's result.
func (s *supervisor) refuseCall(rc syscall.RawConn, n *seccompNotif, why string, errno unix.Errno) verdict {
	if why != "" {
		if !valid(rc, n.ID) {
			return verdict{drop: true}
		}
		s.record(int(n.Pid), why)
	}
	return refuse(errno)
}

// takeSocket duplicates the caller's descriptor sockfd into this process.
// When ok is false, vd answers the call instead. Where pidfd_getfd is
// refused (a container's seccomp profile), the call fails with EACCES and
// the bash call's result says why: the supervisor cannot make the call
// itself, and letting the kernel continue after the check would let
// another thread of the caller rewrite the address (or swap the socket)
// in between — to an outside socket such as docker.sock. No sandbox
// allows every destination (pathname sockets outside the writable roots
// are always checked), so no call is let through unchecked.
func (s *supervisor) takeSocket(rc syscall.RawConn, n *seccompNotif, sockfd int) (sock int, vd verdict, ok bool) {
	if !PidfdGetfdWorks() {
		return -1, s.refuseCall(rc, n, noGetfdWhy, unix.EACCES), false
	}
	sock, err := callerFD(int(n.Pid), sockfd)
	if !valid(rc, n.ID) {
		if err == nil {
			unix.Close(sock)
		}
		return -1, verdict{drop: true}, false
	}
	if err != nil {
		return -1, refuse(errnoOf(err, unix.EBADF)), false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		unix.Close(sock)
		return -1, refuse(unix.ENOSYS), false // as once the listener is gone
	}
	s.inflight[sock] = struct{}{}
	return sock, verdict{}, true
}

// dropSocket closes a socket takeSocket returned.
func (s *supervisor) dropSocket(sock int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inflight, sock)
	unix.Close(sock)
}

// socketTarget resolves the socket path p of pid. why is set when the
// socket is outside what the sandbox may reach.
func (s *supervisor) socketTarget(pid int, p string, v *sandboxView) (resolvedFile, string, error) {
	abs, err := absIn(pid, unix.AT_FDCWD, p)
	if err != nil {
		return resolvedFile{}, "", err
	}
	f, err := resolveIn(pid, abs, true)
	if err != nil {
		return resolvedFile{}, "", err
	}
	if v.writable(f.path) || slices.Contains(s.cfg.allowSockets, f.path) {
		return f, "", nil
	}
	return f, fmt.Sprintf("connect to the UNIX socket %s: refused by the sandbox (outside the writable directories; [sandbox] allow_sockets can name it)", f.path), nil
}

// onSend performs sendto (with an address: the filter passes the others),
// sendmsg and sendmmsg for the caller, like onConnect: each message's
// address, data and control messages are copied once, the address is
// decided, and the message is sent on the caller's own socket. A message
// without an address is sent too: the caller could add one after a check.
// Descriptors an SCM_RIGHTS message passes are taken from the caller;
// explicit SCM_CREDENTIALS fail EPERM (they name the caller, not the
// sender). sendmmsg stops at the first message that fails, as the kernel
// does.
func (s *supervisor) onSend(rc syscall.RawConn, n *seccompNotif, v *sandboxView) verdict {
	if int(n.Pid) == v.self {
		return allowCall // the supervisor's own, from the sandbox's thread (inDomain)
	}
	return verdict{async: func() verdict { return s.send(rc, n, v) }}
}

func (s *supervisor) send(rc syscall.RawConn, n *seccompNotif, v *sandboxView) verdict {
	pid, a := int(n.Pid), n.Data.Args
	sock, vd, ok := s.takeSocket(rc, n, int(int32(a[0])))
	if !ok {
		return vd
	}
	defer s.dropSocket(sock)
	stream := isStream(sock)
	switch n.Data.Nr {
	case unix.SYS_SENDTO:
		name, err := readSockaddr(pid, a[4], a[5])
		if err != nil {
			return refuse(errnoOf(err, unix.EFAULT))
		}
		size := a[2]
		if size > maxSendData {
			if !stream {
				return refuse(unix.EMSGSIZE)
			}
			size = maxSendData
		}
		data, err := appendMem(pid, nil, a[1], size)
		if err != nil {
			return refuse(unix.EFAULT)
		}
		sent, e := s.sendOne(rc, n, v, sock, outMsg{name: name, data: data}, int(int32(a[3])))
		return sendVerdict(sent, e)
	case unix.SYS_SENDMSG:
		m, err := readMsghdr(pid, a[1], stream)
		if err != nil {
			return refuse(errnoOf(err, unix.EFAULT))
		}
		sent, e := s.sendOne(rc, n, v, sock, m, int(int32(a[2])))
		return sendVerdict(sent, e)
	default: // SYS_SENDMMSG
		// struct mmsghdr: a 56-byte msghdr and its msg_len, padded to 64.
		count := 0
		for i := range min(uint64(uint32(a[2])), maxIovecs) {
			at := a[1] + i*64
			m, err := readMsghdr(pid, at, stream)
			var sent int
			e := errnoOf(err, unix.EFAULT)
			if err == nil {
				sent, e = s.sendOne(rc, n, v, sock, m, int(int32(a[3])))
			}
			if e != 0 {
				if count == 0 {
					return refuse(e)
				}
				break
			}
			writeUint32(pid, at+56, uint32(sent))
			count++
		}
		return verdict{val: int64(count)}
	}
}

// sendVerdict answers a send of one message.
func sendVerdict(sent int, e unix.Errno) verdict {
	if e != 0 {
		return refuse(e)
	}
	return verdict{val: int64(sent)}
}

// sendOne decides m's address and sends m on sock.
func (s *supervisor) sendOne(rc syscall.RawConn, n *seccompNotif, v *sandboxView, sock int, m outMsg, flags int) (int, unix.Errno) {
	pid := int(n.Pid)
	d, why, errno := s.checkDest(pid, m.name, v, "send")
	if errno != 0 {
		if vd := s.refuseCall(rc, n, why, errno); vd.drop {
			return 0, unix.ESRCH // nobody waits for the answer
		}
		return 0, errno
	}
	defer d.close()
	control, release, err := takeRights(pid, m.control)
	if err != nil {
		return 0, errnoOf(err, unix.EBADF)
	}
	defer release()
	m.control = control
	sent, e := sockSend(sock, &d, m, flags)
	if e == unix.EPIPE && flags&unix.MSG_NOSIGNAL == 0 {
		// The kernel would have raised SIGPIPE in the caller.
		if tgid, err := tgidOf(pid); err == nil {
			_ = unix.Tgkill(tgid, pid, unix.SIGPIPE)
		}
	}
	return sent, e
}

// writeUint32 writes v to the caller's memory at addr (sendmmsg's
// msg_len); a failure is the caller's own doing and ignored.
func writeUint32(pid int, addr uint64, v uint32) {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], v)
	local := []unix.Iovec{{Base: &b[0]}}
	local[0].SetLen(len(b))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	_, _ = unix.ProcessVMWritev(pid, local, remote, 0)
}
