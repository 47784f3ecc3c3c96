//go:build linux && (amd64 || arm64)

package policy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// supervisor answers the notifications of a Confinement's filtered
// threads (see supervisor.go). The notifications are received by a proxy
// process (supervisor_proxy_linux.go) and handed to the supervisor over a
// socket; the supervisor answers on its own copy of each listener.
//
// Why a proxy: the thread that starts bash carries the filter, so the
// exec of bash itself — by the vfork child of that thread — is notified.
// Go's fork holds the thread's P until the child has exec'd, so a
// stop-the-world (a GC phase) waits for that exec while the exec waits for
// a goroutine of this process to answer: a deadlock. The proxy, another
// process, answers that one exec itself — an exec by a child of the
// service still running the service's binary, which inside the sandbox
// only that vfork child can be: onExec refuses to run the service's
// binary there — and forwards the rest; nothing in the service has to
// run for it.
//
// Close ends the proxy and closes the listeners: processes still in the
// sandbox then get ENOSYS from every call the filter would have sent, so
// nothing passes unchecked.
type supervisor struct {
	cfg supervisorConfig
	ids *execIndex
	log refusalLog

	mu        sync.Mutex
	proxy     *exec.Cmd
	conn      *net.UnixConn
	listeners map[uint64]*listener
	nextID    uint64
	closed    bool
	wg        sync.WaitGroup
	// inflight are the callers' sockets the supervisor is connecting or
	// sending on: close shuts them down, so that a connect to an address
	// that never answers does not hold it for minutes.
	inflight map[int]struct{}

	// connects counts the connect notifications the proxy forwarded (a
	// test sees which ones the proxy answered itself).
	connects atomic.Int64
}

// listener is the supervisor's copy of one filter's listener.
type listener struct {
	f    *os.File
	rc   syscall.RawConn
	view *sandboxView
}

var errSupervisorClosed = errors.New("the sandbox was closed")

// supervisorUsable says why the supervisor cannot run here, or nil.
func supervisorUsable() error {
	if !helperWired.Load() {
		return errors.New("this executable does not act as the sandbox helper")
	}
	return filterWorks()
}

var filterWorks = sync.OnceValue(func() error {
	done := make(chan error, 1)
	go func() {
		// The goroutine ends locked, so its thread (and filter) go with it.
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- err
			return
		}
		fd, err := installFilter(filterOpts{exec: true, metadata: true})
		if err == nil {
			unix.Close(fd)
		}
		done <- err
	}()
	return <-done
})

func newSupervisor(cfg supervisorConfig) *supervisor {
	return &supervisor{cfg: cfg, ids: newExecIndex(cfg.denyNames), listeners: map[uint64]*listener{}, inflight: map[int]struct{}{}}
}

// attach installs the sandbox's filter on the calling thread, which has
// set no_new_privs and stays locked, and serves its listener.
func (s *supervisor) attach(v *sandboxView, network bool) error {
	// The proxy is started first, and from another thread: started from
	// this one once filtered, its own exec would wait for itself.
	if err := s.startProxy(); err != nil {
		return err
	}
	v.network, v.self = network, unix.Gettid()
	fd, err := installFilter(filterOpts{exec: s.cfg.execDenied != nil, metadata: v.metadata, network: network})
	if err != nil {
		return err
	}
	return s.serve(fd, v)
}

// startProxy starts the proxy process once, from a goroutine of its own.
func (s *supervisor) startProxy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errSupervisorClosed
	}
	if s.proxy != nil {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		cmd, conn, err := startProxy()
		if err == nil {
			s.proxy, s.conn = cmd, conn
		}
		done <- err
	}()
	if err := <-done; err != nil {
		return fmt.Errorf("starting the supervisor's proxy: %w", err)
	}
	s.wg.Add(1)
	go s.read(s.conn)
	return nil
}

// serve hands listener fd to the proxy and answers what it forwards
// until Close.
func (s *supervisor) serve(fd int, v *sandboxView) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		unix.Close(fd)
		return errSupervisorClosed
	}
	f := os.NewFile(uintptr(fd), "seccomp-listener")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return err
	}
	s.nextID++
	id := s.nextID
	// Known before the proxy can forward anything of it.
	s.listeners[id] = &listener{f: f, rc: rc, view: v}
	var msg [8]byte
	binary.NativeEndian.PutUint64(msg[:], id)
	// Sent from another thread: this one is filtered now, and sendmsg is
	// among the calls the filter sends to the proxy, which does not have
	// the listener yet.
	sent := make(chan error, 1)
	go func() {
		_, _, err := s.conn.WriteMsgUnix(msg[:], unix.UnixRights(fd), nil)
		sent <- err
	}()
	if err := <-sent; err != nil {
		delete(s.listeners, id)
		f.Close()
		return fmt.Errorf("handing the listener to the proxy: %w", err)
	}
	return nil
}

// read answers the notifications the proxy forwards.
func (s *supervisor) read(conn *net.UnixConn) {
	defer s.wg.Done()
	var buf [proxyMsgSize]byte
	for {
		n, err := conn.Read(buf[:])
		if err != nil {
			// Closed, or the proxy died: nobody receives the
			// notifications any more, so the callers must not wait for
			// them. Without a listener, the filter fails them (ENOSYS).
			s.mu.Lock()
			for id, l := range s.listeners {
				l.f.Close()
				delete(s.listeners, id)
			}
			s.mu.Unlock()
			return
		}
		if n != proxyMsgSize {
			continue
		}
		id := binary.NativeEndian.Uint64(buf[:8])
		var notif seccompNotif
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&notif)), unsafe.Sizeof(notif)), buf[8:])
		s.mu.Lock()
		l := s.listeners[id]
		s.mu.Unlock()
		if l != nil {
			s.handle(l.rc, &notif, l.view)
		}
	}
}

// close stops the proxy, closes the listeners and waits for the
// goroutines.
func (s *supervisor) close() {
	s.mu.Lock()
	s.closed = true
	conn, proxy, ls := s.conn, s.proxy, s.listeners
	s.conn, s.proxy, s.listeners = nil, nil, map[uint64]*listener{}
	for sock := range s.inflight {
		_ = unix.Shutdown(sock, unix.SHUT_RDWR) // ends a blocked connect or send
	}
	s.mu.Unlock()
	if conn != nil {
		conn.Close() // the proxy reads EOF and exits
	}
	if proxy != nil {
		_ = proxy.Wait()
	}
	for _, l := range ls {
		l.f.Close()
	}
	s.wg.Wait()
}

// verdict is an answer to one notification.
type verdict struct {
	cont  bool           // let the kernel run the call as it is
	errno unix.Errno     // fail the call with it (0: succeed with val)
	val   int64          // the call's result when errno is 0 and not cont
	drop  bool           // the notification went stale: no answer
	async func() verdict // the answer needs blocking work (a connect)
}

var allowCall = verdict{cont: true}

func refuse(e unix.Errno) verdict { return verdict{errno: e} }

func (s *supervisor) handle(rc syscall.RawConn, n *seccompNotif, v *sandboxView) {
	var vd verdict
	switch nr := n.Data.Nr; nr {
	case unix.SYS_EXECVE, unix.SYS_EXECVEAT:
		vd = s.onExec(rc, n)
	case unix.SYS_CONNECT:
		s.connects.Add(1)
		vd = s.onConnect(rc, n, v)
	case unix.SYS_SENDTO, unix.SYS_SENDMSG, unix.SYS_SENDMMSG:
		vd = s.onSend(rc, n, v)
	default:
		vd = s.onMetadata(rc, n, v)
	}
	if vd.async != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.reply(rc, n.ID, vd.async())
		}()
		return
	}
	s.reply(rc, n.ID, vd)
}

func (s *supervisor) reply(rc syscall.RawConn, id uint64, vd verdict) {
	if vd.drop {
		return
	}
	r := seccompNotifResp{ID: id, Val: vd.val}
	switch {
	case vd.cont:
		r.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	case vd.errno != 0:
		r.Error = -int32(vd.errno)
	}
	// ENOENT: the caller died, or a signal interrupted its call.
	_ = rc.Control(func(fd uintptr) { _ = notifSend(fd, &r) })
}

// valid reports whether notification id still waits for its answer: what
// was read from the caller's memory and /proc belongs to it, not to a
// process that reused its pid.
func valid(rc syscall.RawConn, id uint64) bool {
	ok := false
	_ = rc.Control(func(fd uintptr) { ok = notifValid(fd, id) })
	return ok
}

// record keeps a refusal for the bash call pid descends from.
func (s *supervisor) record(pid int, msg string) {
	chain := []int{pid}
	for len(chain) < 64 {
		b, err := os.ReadFile(procPath(chain[len(chain)-1], "stat"))
		if err != nil {
			break
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if i < 0 || len(f) < 2 {
			break
		}
		ppid, err := strconv.Atoi(f[1])
		if err != nil || ppid <= 1 {
			break
		}
		chain = append(chain, ppid)
	}
	s.log.add(chain, msg)
}

// procPath names a file of process pid.
func procPath(pid int, rest string) string {
	return "/proc/" + strconv.Itoa(pid) + "/" + rest
}

// errnoOf is err's errno, or fallback.
func errnoOf(err error, fallback unix.Errno) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return fallback
}
