//go:build linux && (amd64 || arm64)

package policy

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// superviseArg is the hidden first argument that turns this executable
// into the supervisor's proxy (see supervisor).
const superviseArg = "__sandbox-supervise"

// proxyMsgSize is a forwarded notification: the listener's id, then the
// kernel's struct seccomp_notif.
const proxyMsgSize = 8 + int(unsafe.Sizeof(seccompNotif{}))

// startProxy starts the proxy on one end of a socket pair and returns the
// other. The proxy runs the very file this process runs (/proc/self/exe,
// even if it was replaced on disk since), so its own executable is the
// service's, and dies with the service.
func startProxy() (*exec.Cmd, *net.UnixConn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	theirs := os.NewFile(uintptr(fds[1]), "supervisor-proxy")
	defer theirs.Close()
	ours := os.NewFile(uintptr(fds[0]), "supervisor")
	defer ours.Close()
	cmd := exec.Command("/proc/self/exe", superviseArg)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	c, err := net.FileConn(ours)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, err
	}
	return cmd, c.(*net.UnixConn), nil
}

// superviseMain is the proxy: it receives listeners (with their ids) on
// fd 3, waits for their notifications, answers the exec of the service's
// own vfork children and forwards every other notification to the
// service. It returns when the service closes the socket.
func superviseMain() int {
	var self unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &self); err != nil {
		return 125
	}
	c, err := net.FileConn(os.NewFile(3, "supervisor"))
	if err != nil {
		return 125
	}
	conn := c.(*net.UnixConn)
	for {
		var id [8]byte
		oob := make([]byte, unix.CmsgSpace(4))
		n, oobn, _, _, err := conn.ReadMsgUnix(id[:], oob)
		if err != nil || n == 0 {
			return 0
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			continue
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			continue
		}
		go relay(conn, id, fds[0], &self)
	}
}

// relay forwards the notifications of listener fd until no process uses
// its filter any more.
func relay(conn *net.UnixConn, id [8]byte, fd int, self *unix.Stat_t) {
	defer unix.Close(fd)
	var msg [proxyMsgSize]byte
	copy(msg[:8], id[:])
	for {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(p, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if p[0].Revents&unix.POLLIN == 0 {
			return // hung up: the filter has no process left
		}
		var n seccompNotif
		if notifRecv(uintptr(fd), &n) != nil {
			continue // the caller died meanwhile
		}
		if spawnerExec(&n, self) && notifValid(uintptr(fd), n.ID) {
			r := seccompNotifResp{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
			_ = notifSend(uintptr(fd), &r)
			continue
		}
		if r, ok := connectLocally(&n); ok {
			// A stale id (the caller died) fails the send, harmlessly.
			_ = notifSend(uintptr(fd), &r)
			continue
		}
		copy(msg[8:], unsafe.Slice((*byte)(unsafe.Pointer(&n)), unsafe.Sizeof(n)))
		if _, err := conn.Write(msg[:]); err != nil {
			return
		}
	}
}

// spawnerExec reports whether n is the exec of a process still running
// the service's executable: the child the filtered thread forked, about
// to become bash (or bwrap).
func spawnerExec(n *seccompNotif, self *unix.Stat_t) bool {
	if n.Data.Nr != unix.SYS_EXECVE && n.Data.Nr != unix.SYS_EXECVEAT {
		return false
	}
	var st unix.Stat_t
	return unix.Stat(procPath(int(n.Pid), "exe"), &st) == nil && st.Dev == self.Dev && st.Ino == self.Ino
}

// connectLocally answers, without the service, a connect(2) whose verdict
// needs no decision of it: a pathname UNIX socket that does not exist,
// resolved in the caller's view exactly as the service resolves it, fails
// with ENOENT. Every bash start-up makes two such calls (glibc asking
// nscd for the user name), each of which cost a round trip to the
// service. Nothing is widened: the call is refused, so the kernel never
// runs it. Whatever else — another family (the supervisor performs every
// connect itself, see onConnect), an abstract address, a socket that
// exists, any error reading the caller — goes to the service.
func connectLocally(n *seccompNotif) (seccompNotifResp, bool) {
	if n.Data.Nr != unix.SYS_CONNECT {
		return seccompNotifResp{}, false
	}
	pid, a := int(n.Pid), n.Data.Args
	p, abstract, ok, err := sockaddrPath(pid, a[1], a[2])
	if err != nil || abstract || !ok {
		return seccompNotifResp{}, false
	}
	abs, err := absIn(pid, unix.AT_FDCWD, p)
	if err != nil {
		return seccompNotifResp{}, false
	}
	f, err := resolveIn(pid, abs, true)
	if err == nil {
		f.close()
		return seccompNotifResp{}, false
	}
	if !errors.Is(err, unix.ENOENT) {
		return seccompNotifResp{}, false
	}
	return seccompNotifResp{ID: n.ID, Error: -int32(unix.ENOENT)}, true
}
