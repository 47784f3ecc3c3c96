//go:build linux && (amd64 || arm64)

package policy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The supervisor performs every connect and every send it is notified of
// itself (see onConnect, onSend): answering "continue" would let the
// kernel read the caller's address again after the check, and another
// thread of the caller could rewrite it in between (or swap the socket),
// turning an internet or abstract address into a pathname socket such as
// docker.sock. So the supervisor copies the address (and a send's data)
// once from the caller's memory, takes the caller's socket itself
// (pidfd_getfd), decides on the copy and hands the kernel that copy.
//
// Landlock does not bind the supervisor, so it enforces what Landlock
// enforced for the caller: no internet address without the network, and
// an abstract address only through the sandbox's own thread (inDomain),
// where the kernel applies the domain's scope.

// familyAllowed says whether an address of family fam (other than
// AF_UNIX, which has its own rules) may be reached from the sandbox.
func (v *sandboxView) familyAllowed(fam uint16) bool {
	switch fam {
	case afUnspec, afNetlink:
		return true // a disconnect; the kernel's own sockets
	case afInet, afInet6:
		return v.network || v.ownNet
	}
	return v.network // AF_VSOCK, AF_TIPC, ...: networks too
}

// maxSockaddr bounds an address, as the kernel does
// (sizeof(struct sockaddr_storage)).
const maxSockaddr = 128

// readSockaddr copies the address of addrlen bytes at addr, as the kernel
// does: nil for none, EINVAL beyond maxSockaddr.
func readSockaddr(pid int, addr, addrlen uint64) ([]byte, error) {
	n := int32(addrlen)
	switch {
	case n < 0 || n > maxSockaddr:
		return nil, unix.EINVAL
	case n == 0:
		return nil, nil
	case addr == 0:
		return nil, unix.EFAULT
	}
	b := make([]byte, n)
	if err := readFull(pid, addr, b); err != nil {
		return nil, unix.EFAULT
	}
	return b, nil
}

// sockDest is a checked destination.
type sockDest struct {
	name []byte // the address as copied (nil: none)
	// file is the checked pathname socket, reached through its descriptor
	// (/proc/self/fd/N), so a link swapped after the check changes nothing.
	file    resolvedFile
	hasFile bool
	// inDomain: an abstract address, reached from the sandbox's thread.
	inDomain func(func()) error
}

func (d *sockDest) close() {
	if d.hasFile {
		d.file.close()
	}
}

// sockaddr is the address handed to the kernel.
func (d *sockDest) sockaddr() []byte {
	if !d.hasFile {
		return d.name
	}
	b := make([]byte, 2, 2+32)
	binary.NativeEndian.PutUint16(b, unix.AF_UNIX)
	b = append(b, "/proc/self/fd/"+strconv.Itoa(d.file.fd)...)
	return append(b, 0)
}

// checkDest decides the address name of a connect or send ("connect",
// "send") by pid. A refusal has errno set and, for the bash call's
// result, why.
func (s *supervisor) checkDest(pid int, name []byte, v *sandboxView, call string) (d sockDest, why string, errno unix.Errno) {
	d.name = name
	if len(name) < 2 {
		return d, "", 0 // no address: the socket's peer, or the kernel's EINVAL
	}
	fam := binary.NativeEndian.Uint16(name)
	if fam != unix.AF_UNIX {
		if v.familyAllowed(fam) {
			return d, "", 0
		}
		return d, fmt.Sprintf("%s to %s: refused by the sandbox (no network; [sandbox] network allows it)", call, describeAddr(name)), unix.EACCES
	}
	if len(name) == 2 {
		return d, "", 0 // unnamed: the kernel's EINVAL
	}
	if name[2] == 0 {
		if v.denyAbstract {
			return d, call + " to an abstract UNIX socket: refused by the sandbox", unix.EACCES
		}
		d.inDomain = v.inDomain
		return d, "", 0
	}
	p := name[2:]
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	f, why, err := s.socketTarget(pid, string(p), v)
	if err != nil {
		return d, "", errnoOf(err, unix.EACCES)
	}
	if why != "" {
		f.close()
		return d, why, unix.EACCES
	}
	d.file, d.hasFile = f, true
	return d, "", 0
}

// describeAddr names an address in a refusal.
func describeAddr(name []byte) string {
	switch fam := binary.NativeEndian.Uint16(name); {
	case fam == afInet && len(name) >= 8:
		ip := netip.AddrFrom4([4]byte(name[4:8]))
		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(name[2:4])).String()
	case fam == afInet6 && len(name) >= 24:
		ip := netip.AddrFrom16([16]byte(name[8:24]))
		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(name[2:4])).String()
	default:
		return "an address of family " + strconv.Itoa(int(fam))
	}
}

// PidfdGetfdWorks reports whether the supervisor can take a sandboxed
// process's socket (pidfd_getfd) here. Without it every connect and send
// it is notified of fails with EACCES (takeSocket): `reasonix doctor`
// says so.
func PidfdGetfdWorks() bool { return !noGetfd.Load() && getfdWorks() }

// noGetfd makes the supervisor act as where pidfd_getfd is refused: set
// only by tests, which have no container to refuse it.
var noGetfd atomic.Bool

// noGetfdWhy is the refusal's reason in the bash call's result.
const noGetfdWhy = "connect or send: refused by the sandbox: pidfd_getfd is refused here (a container's seccomp profile?), " +
	"without which the supervisor cannot make the call safely; allow pidfd_getfd (see reasonix doctor)"

// getfdWorks says whether pidfd_getfd works here at all (a container's
// seccomp profile may refuse it). Probed once on this process, not per
// call: an error on one call (the caller gone, say) must not turn the
// next into a refusal of all.
var getfdWorks = sync.OnceValue(func() bool {
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, pidfd, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// callerFD duplicates descriptor fd of thread tid into this process.
func callerFD(tid, fd int) (int, error) {
	pidfd, err := unix.PidfdOpen(tid, unix.PIDFD_THREAD)
	if errors.Is(err, unix.EINVAL) {
		// Before Linux 6.9 a pidfd names a thread-group leader only; the
		// threads of a process share its descriptors.
		var tgid int
		if tgid, err = tgidOf(tid); err == nil {
			pidfd, err = unix.PidfdOpen(tgid, 0)
		}
	}
	if err != nil {
		return -1, err
	}
	defer unix.Close(pidfd)
	return unix.PidfdGetfd(pidfd, fd, 0)
}

// tgidOf is the process thread tid belongs to.
func tgidOf(tid int) (int, error) {
	b, err := os.ReadFile(procPath(tid, "status"))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, unix.ESRCH
}

// sockConnect connects sock to d: from the sandbox's thread for an
// abstract address under Landlock, else from this one. EINTR is this
// process's own signal, not the caller's: the call is made again (a
// blocking connect then waits on, a UNIX one starts afresh).
func sockConnect(sock int, d *sockDest) unix.Errno {
	sa := d.sockaddr()
	do := func() unix.Errno {
		for {
			var p unsafe.Pointer
			if len(sa) > 0 {
				p = unsafe.Pointer(&sa[0])
			}
			_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(p), uintptr(len(sa)))
			runtime.KeepAlive(sa)
			if e != unix.EINTR {
				return e
			}
		}
	}
	if d.inDomain == nil {
		return do()
	}
	var e unix.Errno
	if err := d.inDomain(func() { e = do() }); err != nil {
		return unix.EACCES // the sandbox is closing
	}
	return e
}

// Bounds of what a send copies: a datagram the kernel would take fits
// (its default limit is about 200 KiB); a longer write to a stream socket
// is sent in part, as the kernel may too.
const (
	maxSendData    = 4 << 20
	maxSendControl = 64 << 10
	maxIovecs      = 1024 // UIO_MAXIOV
)

// outMsg is one message to send, copied from the caller.
type outMsg struct {
	name    []byte
	data    []byte
	control []byte
}

// readMsghdr copies the struct msghdr at addr: its name, the data of its
// iovecs (at most maxSendData bytes, or EMSGSIZE when the socket is not a
// stream: a datagram is never cut), and its control messages.
func readMsghdr(pid int, addr uint64, stream bool) (outMsg, error) {
	var h [56]byte // struct msghdr
	if err := readFull(pid, addr, h[:]); err != nil {
		return outMsg{}, unix.EFAULT
	}
	ne := binary.NativeEndian
	namep, namelen := ne.Uint64(h[0:]), ne.Uint32(h[8:])
	iovp, iovlen := ne.Uint64(h[16:]), ne.Uint64(h[24:])
	ctlp, ctllen := ne.Uint64(h[32:]), ne.Uint64(h[40:])
	var m outMsg
	if namep != 0 && namelen != 0 {
		// The kernel cuts a longer name to sockaddr_storage.
		var err error
		if m.name, err = readSockaddr(pid, namep, uint64(min(namelen, maxSockaddr))); err != nil {
			return outMsg{}, err
		}
	}
	if iovlen > maxIovecs {
		return outMsg{}, unix.EMSGSIZE
	}
	if iovlen > 0 {
		iov := make([]byte, 16*iovlen)
		if err := readFull(pid, iovp, iov); err != nil {
			return outMsg{}, unix.EFAULT
		}
		for i := range iovlen {
			base, n := ne.Uint64(iov[16*i:]), ne.Uint64(iov[16*i+8:])
			if int64(n) < 0 {
				return outMsg{}, unix.EINVAL
			}
			if room := uint64(maxSendData - len(m.data)); n > room {
				if !stream {
					return outMsg{}, unix.EMSGSIZE
				}
				n = room
			}
			var err error
			if m.data, err = appendMem(pid, m.data, base, n); err != nil {
				return outMsg{}, err
			}
		}
	}
	if ctllen > 0 {
		if ctllen > maxSendControl {
			return outMsg{}, unix.ENOBUFS
		}
		m.control = make([]byte, ctllen)
		if err := readFull(pid, ctlp, m.control); err != nil {
			return outMsg{}, unix.EFAULT
		}
	}
	return m, nil
}

// appendMem appends n bytes of the caller's memory at addr to b.
func appendMem(pid int, b []byte, addr, n uint64) ([]byte, error) {
	if n == 0 {
		return b, nil
	}
	at := len(b)
	b = append(b, make([]byte, n)...)
	if err := readFull(pid, addr, b[at:]); err != nil {
		return nil, unix.EFAULT
	}
	return b, nil
}

// takeRights rewrites the control messages of m for this process: the
// descriptors an SCM_RIGHTS message passes are the caller's, so each is
// duplicated here (and closed by the returned func once sent). Other
// control messages hold no reference to the caller and pass as they are.
func takeRights(tid int, control []byte) ([]byte, func(), error) {
	var taken []int
	release := func() {
		for _, fd := range taken {
			unix.Close(fd)
		}
	}
	out := bytes.Clone(control)
	for _, at := range rightsSlots(out) {
		fd, err := callerFD(tid, int(int32(binary.NativeEndian.Uint32(out[at:]))))
		if err != nil {
			release()
			return nil, nil, err
		}
		taken = append(taken, fd)
		binary.NativeEndian.PutUint32(out[at:], uint32(fd))
	}
	return out, release, nil
}

// rightsSlots returns where, in the control messages b (struct cmsghdr
// each, 8-byte aligned), the descriptors of SCM_RIGHTS messages are: the
// offsets of their 4-byte slots, in order. It stops at the first
// malformed header (the kernel refuses such a message with EINVAL).
func rightsSlots(b []byte) []int {
	var slots []int
	for off := 0; off+unix.SizeofCmsghdr <= len(b); {
		n := binary.NativeEndian.Uint64(b[off:])
		if n < unix.SizeofCmsghdr || n > uint64(len(b)-off) {
			break
		}
		level := int32(binary.NativeEndian.Uint32(b[off+8:]))
		typ := int32(binary.NativeEndian.Uint32(b[off+12:]))
		if level == unix.SOL_SOCKET && typ == unix.SCM_RIGHTS {
			for at := off + unix.SizeofCmsghdr; at+4 <= off+int(n); at += 4 {
				slots = append(slots, at)
			}
		}
		off += unix.CmsgSpace(int(n) - unix.SizeofCmsghdr)
	}
	return slots
}

// sockSend sends m on sock to d with the caller's flags, never raising
// SIGPIPE here (the caller gets it, see onSend). It returns the bytes sent.
func sockSend(sock int, d *sockDest, m outMsg, flags int) (int, unix.Errno) {
	sa := d.sockaddr()
	do := func() (int, unix.Errno) {
		var h unix.Msghdr
		var iov unix.Iovec
		if len(sa) > 0 {
			h.Name = &sa[0]
			h.Namelen = uint32(len(sa))
		}
		if len(m.data) > 0 {
			iov.Base = &m.data[0]
			iov.SetLen(len(m.data))
			h.Iov = &iov
			h.SetIovlen(1)
		}
		if len(m.control) > 0 {
			h.Control = &m.control[0]
			h.SetControllen(len(m.control))
		}
		for {
			n, _, e := unix.Syscall(unix.SYS_SENDMSG, uintptr(sock), uintptr(unsafe.Pointer(&h)), uintptr(flags|unix.MSG_NOSIGNAL))
			runtime.KeepAlive(sa)
			runtime.KeepAlive(m)
			if e != unix.EINTR {
				return int(n), e
			}
		}
	}
	if d.inDomain == nil {
		return do()
	}
	var n int
	var e unix.Errno
	if err := d.inDomain(func() { n, e = do() }); err != nil {
		return 0, unix.EACCES
	}
	return n, e
}

// isStream says whether sock is a byte stream (a long write may be sent
// in part).
func isStream(sock int) bool {
	t, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	return err == nil && t == unix.SOCK_STREAM
}
