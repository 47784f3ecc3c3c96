//go:build linux && (amd64 || arm64)

package policy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// onConnect decides connect(2) to a UNIX socket. Another family passes
// (Landlock and the network namespace decide TCP; the filter refuses the
// rest without the network). A pathname socket inside the writable roots
// or named by allow_sockets is connected by the supervisor itself, on the
// caller's own socket (pidfd_getfd) through the descriptor of the very
// file it checked: the kernel never resolves the caller's path again, so
// swapping a link after the check reaches nothing else.
func (s *supervisor) onConnect(rc syscall.RawConn, n *seccompNotif, v *sandboxView) verdict {
	pid, a := int(n.Pid), n.Data.Args
	p, abstract, ok, err := sockaddrPath(pid, a[1], a[2])
	switch {
	case err != nil:
		return refuse(errnoOf(err, unix.EFAULT))
	case !ok:
		return allowCall
	case abstract && v.denyAbstract:
		s.record(pid, "connect to an abstract UNIX socket: refused by the sandbox")
		return refuse(unix.EACCES)
	case abstract:
		return allowCall // Landlock's scope, or the sandbox's own network namespace
	}
	f, why, err := s.socketTarget(pid, p, v)
	if err != nil {
		return refuse(errnoOf(err, unix.EACCES))
	}
	if why != "" {
		if !valid(rc, n.ID) {
			return verdict{drop: true}
		}
		f.close()
		s.record(pid, why)
		return refuse(unix.EACCES)
	}
	sockfd := int(int32(a[0]))
	return verdict{async: func() verdict {
		defer f.close()
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			return verdict{drop: true}
		}
		defer unix.Close(pidfd)
		sock, err := unix.PidfdGetfd(pidfd, sockfd, 0)
		if !valid(rc, n.ID) {
			if err == nil {
				unix.Close(sock)
			}
			return verdict{drop: true}
		}
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			// Where pidfd_getfd is not allowed (a container's seccomp
			// profile), the kernel connects after the check: a link
			// swapped in between is then a residual, as for datagrams.
			return allowCall
		}
		if err != nil {
			return refuse(errnoOf(err, unix.EBADF))
		}
		defer unix.Close(sock)
		err = unix.Connect(sock, &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(f.fd)})
		if err != nil {
			return refuse(errnoOf(err, unix.ECONNREFUSED))
		}
		return verdict{}
	}}
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

// onSend decides sendto/sendmsg/sendmmsg with a UNIX destination: refused
// outside the roots and allow_sockets, else passed on. Unlike connect, the
// kernel resolves the path again after the check (a datagram cannot be
// sent on the caller's behalf without copying it), so a link swapped in
// between can still reach a datagram socket elsewhere: a residual.
func (s *supervisor) onSend(rc syscall.RawConn, n *seccompNotif, v *sandboxView) verdict {
	pid, a := int(n.Pid), n.Data.Args
	type dest struct{ addr, len uint64 }
	var dests []dest
	switch n.Data.Nr {
	case unix.SYS_SENDTO:
		dests = append(dests, dest{a[4], a[5]})
	case unix.SYS_SENDMSG:
		var h [16]byte
		if err := readFull(pid, a[1], h[:]); err != nil {
			return refuse(unix.EFAULT)
		}
		dests = append(dests, dest{binary.NativeEndian.Uint64(h[:8]), uint64(binary.NativeEndian.Uint32(h[8:12]))})
	case unix.SYS_SENDMMSG:
		// struct mmsghdr: a 56-byte msghdr and an unsigned int, padded to 64.
		for i := range min(a[2], 1024) {
			var h [16]byte
			if err := readFull(pid, a[1]+i*64, h[:]); err != nil {
				return refuse(unix.EFAULT)
			}
			dests = append(dests, dest{binary.NativeEndian.Uint64(h[:8]), uint64(binary.NativeEndian.Uint32(h[8:12]))})
		}
	}
	for _, d := range dests {
		p, abstract, ok, err := sockaddrPath(pid, d.addr, d.len)
		switch {
		case err != nil:
			return refuse(errnoOf(err, unix.EFAULT))
		case !ok:
			continue
		case abstract && v.denyAbstract:
			s.record(pid, "send to an abstract UNIX socket: refused by the sandbox")
			return refuse(unix.EACCES)
		case abstract:
			continue
		}
		f, why, err := s.socketTarget(pid, p, v)
		if err != nil {
			return refuse(errnoOf(err, unix.EACCES))
		}
		f.close()
		if why != "" {
			s.record(pid, why)
			return refuse(unix.EACCES)
		}
	}
	return allowCall
}

// onMetadata decides chmod, chown and utimes: passed on inside the
// writable roots, refused with EPERM elsewhere. The kernel resolves the
// path again after the check, so a link swapped in between inside a
// writable root can still redirect the call: a residual (Landlock still
// refuses every write of content there).
func (s *supervisor) onMetadata(rc syscall.RawConn, n *seccompNotif, v *sandboxView) verdict {
	if !v.metadata {
		return allowCall
	}
	pid, a := int(n.Pid), n.Data.Args
	dirfd, pathp, follow, fdOnly, flags := int32(unix.AT_FDCWD), uint64(0), true, int32(-1), uint64(0)
	call := "chmod"
	switch n.Data.Nr {
	case unix.SYS_FCHMOD:
		fdOnly = int32(a[0])
	case unix.SYS_FCHOWN:
		fdOnly, call = int32(a[0]), "chown"
	case unix.SYS_FCHMODAT:
		dirfd, pathp = int32(a[0]), a[1]
	case unix.SYS_FCHMODAT2:
		dirfd, pathp, flags = int32(a[0]), a[1], a[3]
	case unix.SYS_FCHOWNAT:
		dirfd, pathp, flags, call = int32(a[0]), a[1], a[4], "chown"
	case unix.SYS_UTIMENSAT:
		dirfd, pathp, flags, call = int32(a[0]), a[1], a[3], "utimes"
		if pathp == 0 {
			fdOnly = dirfd
		}
	default:
		var ok bool
		if dirfd, pathp, follow, fdOnly, call, ok = legacyMetadata(n.Data.Nr, a); !ok {
			return allowCall
		}
	}
	if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
		follow = false
	}
	var target string
	if fdOnly < 0 && pathp != 0 {
		p, err := readCString(pid, pathp, unix.PathMax)
		if err != nil {
			return refuse(errnoOf(err, unix.EFAULT))
		}
		if p == "" && flags&unix.AT_EMPTY_PATH != 0 {
			fdOnly = dirfd
		} else {
			abs, err := absIn(pid, dirfd, p)
			if err != nil {
				return refuse(errnoOf(err, unix.EBADF))
			}
			f, err := resolveIn(pid, abs, follow)
			if err != nil {
				return refuse(errnoOf(err, unix.ENOENT))
			}
			f.close()
			target = f.path
		}
	}
	if fdOnly >= 0 {
		p, err := fdPath(pid, fdOnly)
		if err != nil {
			return allowCall // not a file of a directory tree: a pipe, a socket
		}
		target = p
	}
	if target == "" || v.writable(target) {
		return allowCall
	}
	if !valid(rc, n.ID) {
		return verdict{drop: true}
	}
	s.record(pid, fmt.Sprintf("%s of %s: refused by the sandbox (outside the writable directories)", call, target))
	return refuse(unix.EPERM)
}
