//go:build linux && (amd64 || arm64)

package policy

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// metaCall is one chmod, chown or utimes call as the caller made it.
type metaCall struct {
	call      string // "chmod", "chown", "utimes"
	dirfd     int32
	pathp     uint64 // the path's address; 0 with fdOnly
	fdOnly    int32  // the call names a descriptor, not a path (-1: a path)
	emptyPath bool   // a descriptor named by AT_EMPTY_PATH and ""
	follow    bool
	flags     uint64 // the *at call's flags

	mode      uint32
	uid, gid  int
	times     uint64 // address of the times argument (0: now)
	timesKind int
}

// How a call's times are laid out in the caller's memory.
const (
	timesTimespec = iota // utimensat: struct timespec[2]
	timesTimeval         // utimes, futimesat: struct timeval[2]
	timesUtimbuf         // utime: struct utimbuf
)

// onMetadata decides chmod, chown and utimes: refused with EPERM outside
// the writable roots; inside them the supervisor makes the call itself, on
// the very file it checked — the O_PATH descriptor the path resolved to in
// the caller's view, or the caller's own descriptor taken with
// pidfd_getfd — so a link or a descriptor swapped by another thread after
// the check changes nothing (letting the kernel run the call would resolve
// the path again). Only a descriptor-only call where pidfd_getfd is
// refused still lets the kernel run it after the check.
func (s *supervisor) onMetadata(rc syscall.RawConn, n *seccompNotif, v *sandboxView) verdict {
	if !v.metadata {
		return allowCall
	}
	pid, a := int(n.Pid), n.Data.Args
	m := metaCall{dirfd: unix.AT_FDCWD, fdOnly: -1, follow: true, call: "chmod"}
	switch n.Data.Nr {
	case unix.SYS_FCHMOD:
		m.fdOnly, m.mode = int32(a[0]), uint32(a[1])
	case unix.SYS_FCHOWN:
		m.fdOnly, m.call, m.uid, m.gid = int32(a[0]), "chown", int(int32(a[1])), int(int32(a[2]))
	case unix.SYS_FCHMODAT:
		m.dirfd, m.pathp, m.mode = int32(a[0]), a[1], uint32(a[2])
	case unix.SYS_FCHMODAT2:
		m.dirfd, m.pathp, m.mode, m.flags = int32(a[0]), a[1], uint32(a[2]), a[3]
	case unix.SYS_FCHOWNAT:
		m.dirfd, m.pathp, m.call, m.uid, m.gid, m.flags = int32(a[0]), a[1], "chown", int(int32(a[2])), int(int32(a[3])), a[4]
	case unix.SYS_UTIMENSAT:
		m.dirfd, m.pathp, m.call, m.times, m.timesKind, m.flags = int32(a[0]), a[1], "utimes", a[2], timesTimespec, a[3]
		if m.pathp == 0 {
			m.fdOnly = m.dirfd
		}
	default:
		var ok bool
		if m, ok = legacyMetadata(n.Data.Nr, a); !ok {
			return allowCall
		}
	}
	if m.flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
		m.follow = false
	}
	if m.flags&^uint64(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return refuse(unix.EINVAL)
	}
	times, err := readTimes(pid, m.times, m.timesKind)
	if err != nil {
		return refuse(errnoOf(err, unix.EFAULT))
	}
	var file resolvedFile
	if m.fdOnly < 0 {
		p, err := readCString(pid, m.pathp, unix.PathMax)
		if err != nil {
			return refuse(errnoOf(err, unix.EFAULT))
		}
		if p == "" && m.flags&unix.AT_EMPTY_PATH != 0 {
			if m.dirfd == unix.AT_FDCWD {
				p = "." // the working directory itself
			} else {
				m.fdOnly, m.emptyPath = m.dirfd, true
			}
		}
		if m.fdOnly < 0 {
			if p == "" {
				return refuse(unix.ENOENT)
			}
			abs, err := absIn(pid, m.dirfd, p)
			if err != nil {
				return refuse(errnoOf(err, unix.EBADF))
			}
			if file, err = resolveIn(pid, abs, m.follow); err != nil {
				return refuse(errnoOf(err, unix.ENOENT))
			}
			defer file.close()
		}
	}
	if m.fdOnly >= 0 {
		if !PidfdGetfdWorks() {
			return s.metadataChecked(rc, n, v, m)
		}
		fd, err := callerFD(pid, int(m.fdOnly))
		if err != nil {
			return refuse(errnoOf(err, unix.EBADF))
		}
		file = resolvedFile{fd: fd}
		defer file.close()
		if file.path, err = readlink("/proc/self/fd/" + strconv.Itoa(fd)); err != nil {
			// Not a file of a directory tree (a pipe, a socket): no
			// root's business, done as asked.
			return metaVerdict(m.apply(file.fd, true, times))
		}
	}
	if !v.writable(file.path) {
		if !valid(rc, n.ID) {
			return verdict{drop: true}
		}
		s.record(pid, fmt.Sprintf("%s of %s: refused by the sandbox (outside the writable directories)", m.call, file.path))
		return refuse(unix.EPERM)
	}
	if !valid(rc, n.ID) {
		return verdict{drop: true}
	}
	return metaVerdict(m.apply(file.fd, m.fdOnly >= 0, times))
}

// metadataChecked is a descriptor-only call where pidfd_getfd is refused:
// the descriptor is checked by its path and the kernel runs the call (a
// descriptor swapped in between is the residual, SPEC §7.1).
func (s *supervisor) metadataChecked(rc syscall.RawConn, n *seccompNotif, v *sandboxView, m metaCall) verdict {
	p, err := fdPath(int(n.Pid), m.fdOnly)
	if err != nil || v.writable(p) {
		return allowCall
	}
	if !valid(rc, n.ID) {
		return verdict{drop: true}
	}
	s.record(int(n.Pid), fmt.Sprintf("%s of %s: refused by the sandbox (outside the writable directories)", m.call, p))
	return refuse(unix.EPERM)
}

func metaVerdict(err error) verdict {
	if err != nil {
		return refuse(errnoOf(err, unix.EPERM))
	}
	return verdict{}
}

// apply makes the call on fd: the caller's own descriptor (own), or the
// O_PATH descriptor of the file its path resolved to.
func (m *metaCall) apply(fd int, own bool, times []unix.Timespec) error {
	switch m.call {
	case "chmod":
		switch {
		case own && !m.emptyPath:
			return unix.Fchmod(fd, m.mode)
		case !m.follow || m.emptyPath:
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				return err
			}
			if st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return unix.EOPNOTSUPP // as the kernel: a link has no mode of its own
			}
		}
		// The magic link reaches the inode the descriptor holds, even an
		// O_PATH one, with no lookup of any name.
		return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), m.mode)
	case "chown":
		if own && !m.emptyPath {
			return unix.Fchown(fd, m.uid, m.gid)
		}
		return unix.Fchownat(fd, "", m.uid, m.gid, unix.AT_EMPTY_PATH)
	default: // utimes
		var tp unsafe.Pointer
		if times != nil {
			tp = unsafe.Pointer(&times[0])
		}
		var e unix.Errno
		if own && !m.emptyPath {
			_, _, e = unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(tp), 0, 0, 0)
		} else {
			empty := [1]byte{}
			_, _, e = unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), uintptr(tp), unix.AT_EMPTY_PATH, 0, 0)
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// readTimes copies a utimes-family call's times as utimensat takes them
// (nil: now).
func readTimes(pid int, addr uint64, kind int) ([]unix.Timespec, error) {
	if addr == 0 {
		return nil, nil
	}
	b := make([]byte, timesSize(kind))
	if err := readFull(pid, addr, b); err != nil {
		return nil, unix.EFAULT
	}
	return parseTimes(b, kind)
}

// timesSize is the size of a times argument of kind.
func timesSize(kind int) int {
	if kind == timesUtimbuf {
		return 16 // struct utimbuf: two time_t
	}
	return 32 // two struct timespec or timeval
}

// parseTimes reads the caller's times argument b (timesSize(kind) bytes):
// a timeval's microseconds out of range is the kernel's EINVAL.
func parseTimes(b []byte, kind int) ([]unix.Timespec, error) {
	if len(b) != timesSize(kind) {
		return nil, unix.EFAULT
	}
	ne := binary.NativeEndian
	ts := make([]unix.Timespec, 2)
	for i := range ts {
		switch kind {
		case timesUtimbuf:
			ts[i] = unix.Timespec{Sec: int64(ne.Uint64(b[8*i:]))}
		case timesTimeval:
			usec := int64(ne.Uint64(b[16*i+8:]))
			if usec < 0 || usec >= 1e6 {
				return nil, unix.EINVAL
			}
			ts[i] = unix.Timespec{Sec: int64(ne.Uint64(b[16*i:])), Nsec: usec * 1000}
		default:
			ts[i] = unix.Timespec{Sec: int64(ne.Uint64(b[16*i:])), Nsec: int64(ne.Uint64(b[16*i+8:]))}
		}
	}
	return ts, nil
}
