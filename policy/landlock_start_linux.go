//go:build linux

package policy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// spawner is an OS thread of this process that has restricted itself
// with Landlock and starts processes on request: a child inherits the
// domain of the thread that forked it, so bash starts already sandboxed,
// without the helper's process image (about 3 ms with the test binary,
// more with the reasonix binary, whose package initialisation runs too).
//
// The thread stays locked to its goroutine and is never unlocked, so the
// Go scheduler runs nothing else on it and the runtime starts new threads
// from its template thread, never from this one; when the goroutine ends
// the thread exits with it. The rest of the process is not restricted.
type spawner struct {
	reqs chan spawnReq
	err  error         // why the thread could not restrict itself
	quit chan struct{} // closed by stop (never reqs: do may send at any time)
	done chan struct{}
}

type spawnReq struct {
	cmd   *exec.Cmd
	fn    func() // instead of cmd: run fn on the thread
	reply chan error
}

// startSpawner starts the thread, which restricts itself with restrict
// (the rules the helper would apply, the supervisor's filter).
func startSpawner(restrict func(*spawner) error) *spawner {
	sp := &spawner{reqs: make(chan spawnReq), quit: make(chan struct{}), done: make(chan struct{})}
	ready := make(chan struct{})
	go sp.run(restrict, ready)
	<-ready
	return sp
}

func (sp *spawner) run(restrict func(*spawner) error, ready chan struct{}) {
	defer close(sp.done)
	runtime.LockOSThread() // never unlocked: the restricted thread dies with the goroutine
	sp.err = restrict(sp)
	close(ready)
	if sp.err != nil {
		return
	}
	for {
		var r spawnReq
		select {
		case r = <-sp.reqs:
		case <-sp.quit:
			return
		}
		if r.fn != nil {
			r.fn()
			r.reply <- nil
			continue
		}
		r.reply <- r.cmd.Start()
	}
}

// restrictThread applies the sandbox of s to the calling thread in two
// layers (see readLayer): the shared read layer, then s's write layer.
func restrictThread(s execSpec) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := dropTracing(); err != nil {
		return err
	}
	if err := restrictReads(s.hide, tmpRoots(s.rw)); err != nil {
		return err
	}
	return restrictWrites(s)
}

// start runs cmd.Start on the restricted thread.
func (sp *spawner) start(cmd *exec.Cmd) error {
	if sp.err != nil {
		return sp.err
	}
	reply := make(chan error, 1)
	select {
	case sp.reqs <- spawnReq{cmd: cmd, reply: reply}:
	case <-sp.done:
		return errors.New("the sandbox was closed")
	}
	return <-reply
}

// do runs fn on the restricted thread: what fn asks of the kernel, the
// kernel decides with the sandbox's own Landlock domain (the supervisor
// connects abstract sockets from there).
func (sp *spawner) do(fn func()) error {
	// No look at sp.err: do is called by the supervisor, which this
	// thread's filter reaches only once restrict succeeded (a path the
	// race detector does not see); a failed thread has closed done.
	reply := make(chan error, 1)
	select {
	case sp.reqs <- spawnReq{fn: fn, reply: reply}:
	case <-sp.done:
		return errors.New("the sandbox was closed")
	}
	return <-reply
}

func (sp *spawner) stop() {
	if sp.err == nil {
		close(sp.quit)
	}
	<-sp.done
}

// spawners holds one spawner per sandbox, made on first use.
type spawners struct {
	mu sync.Mutex
	sp *spawner
}

// get returns the spawner, starting it with restrict on first use.
func (s *spawners) get(restrict func(*spawner) error) *spawner {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sp == nil {
		s.sp = startSpawner(restrict)
	}
	return s.sp
}

// stop ends the thread, if one was started.
func (s *spawners) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sp != nil {
		s.sp.stop()
		s.sp = nil
	}
}

// StartShell starts cmd — a bash command built like WrapShell's argv
// minus the helper (for instance exec.Command("bash", "-c", script)) — in
// the Landlock sandbox, from a thread of this process that restricted
// itself once, instead of through the sandbox-exec helper. The sandbox's
// view is fixed when the first command starts (Landlock binds rules to
// the files that exist then). cmd.Env gets the private TMPDIR. Close the
// Confinement to end the thread.
func (l *landlockShell) StartShell(cmd *exec.Cmd) error {
	tmp, err := l.conf.tmp.path()
	if err != nil {
		return fmt.Errorf("policy: bash is refused: the sandbox's private tmp: %w", err)
	}
	spec := l.spec(l.conf.root, tmp, nil)
	sp := l.conf.spawn.get(func(sp *spawner) error {
		if err := restrictThread(spec); err != nil {
			return err
		}
		v := l.view(tmp)
		v.inDomain = sp.do
		return l.conf.supervise(v, l.network)
	})
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	cmd.Env = append(env, "TMPDIR="+tmp)
	if err := sp.start(cmd); err != nil {
		return fmt.Errorf("policy: sandboxed bash: %w", err)
	}
	return nil
}

// supervise puts the calling thread (locked, no_new_privs set) under the
// confinement's supervisor, if it has one.
func (c *Confinement) supervise(v *sandboxView, network bool) error {
	if c.sup == nil {
		return nil
	}
	if err := c.sup.attach(v, network); err != nil {
		return fmt.Errorf("the seccomp supervisor: %w", err)
	}
	return nil
}
