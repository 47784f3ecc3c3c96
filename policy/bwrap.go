package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// bwrapShell runs bash inside bubblewrap: the filesystem is read-only
// except the workspace, the allow_write roots, the task's own git state
// (gitShared) and a private /tmp; forbid_read paths are hidden; the
// network is unshared unless allowed; the sandbox dies with its parent and
// runs in a new session (no TIOCSTI into the caller's terminal).
type bwrapShell struct {
	exe     string
	conf    *Confinement
	network bool
	extra   []string // flags the probe found necessary here
	bash    string
}

// probeTimeout bounds the one-time check that bubblewrap works.
const probeTimeout = 15 * time.Second

func newBwrap(exe string, conf *Confinement, network bool) *bwrapShell {
	if exe == "" {
		exe = "bwrap"
	}
	return &bwrapShell{exe: exe, conf: conf, network: network}
}

// WrapShell returns the argv running script in workdir inside the sandbox.
func (b *bwrapShell) WrapShell(workdir, script string) ([]string, error) {
	return b.argv(workdir, script, b.extra), nil
}

// Contained: bubblewrap runs the command in its own pid namespace whose
// init dies with bubblewrap, and bubblewrap with the service
// (--die-with-parent), so nothing of a command outlives a crash.
func (b *bwrapShell) Contained() bool { return true }

// bwrapProbe is the outcome of running one bubblewrap executable once.
type bwrapProbe struct {
	once  sync.Once
	exe   string
	bash  string
	extra []string
	err   error
}

// bwrapProbes caches a probe per executable name: the answer does not
// change while the process runs, and a probe costs a sandbox start.
var bwrapProbes sync.Map

// bwrapWorks probes b's executable once per process and completes b with
// what the probe found.
func bwrapWorks(b *bwrapShell) error {
	v, _ := bwrapProbes.LoadOrStore(b.exe, &bwrapProbe{exe: b.exe})
	p := v.(*bwrapProbe)
	p.once.Do(p.run)
	if p.err != nil {
		return p.err
	}
	b.exe, b.bash, b.extra = p.exe, p.bash, p.extra
	return nil
}

// run starts the sandbox once, with the same shape real commands use, and
// remembers which variant works: some hosts need an explicit user
// namespace, others (root in a container) work without one.
func (p *bwrapProbe) run() {
	exe, err := exec.LookPath(p.exe)
	if err != nil {
		p.err = fmt.Errorf("%s was not found", p.exe)
		return
	}
	p.exe = exe
	if p.bash, err = exec.LookPath("bash"); err != nil {
		p.err = errors.New("bash was not found")
		return
	}
	probe := &bwrapShell{exe: exe, bash: p.bash, conf: &Confinement{root: "/"}}
	var last string
	for _, extra := range [][]string{nil, {"--unshare-user"}} {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		argv := probe.argv("/", "exit 0", extra)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		if err == nil {
			p.extra = extra
			return
		}
		last = strings.TrimSpace(stderr.String())
		if last == "" {
			last = err.Error()
		}
	}
	p.err = errors.New("it failed to start: " + last)
}

func (b *bwrapShell) argv(workdir, script string, extra []string) []string {
	a := []string{b.exe, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"}
	if !b.network {
		a = append(a, "--unshare-net")
	}
	a = append(a, extra...)
	a = append(a, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	for _, w := range append(slices.Clip(b.conf.writable), b.conf.gitShared...) {
		if _, err := os.Stat(w); err == nil {
			a = append(a, "--bind", w, w)
		}
	}
	for _, p := range b.conf.git.readOnly() {
		a = append(a, "--ro-bind", p, p) // the checkout's git control files (gitguard.go)
	}
	for _, f := range b.conf.forbidden {
		fi, err := os.Stat(f)
		switch {
		case err != nil:
			// Nothing to hide yet.
		case fi.IsDir():
			a = append(a, "--tmpfs", f, "--remount-ro", f)
		default:
			a = append(a, "--ro-bind", "/dev/null", f)
		}
	}
	bash := b.bash
	if bash == "" {
		bash = "bash"
	}
	return append(a, "--chdir", workdir, "--setenv", "TMPDIR", "/tmp", "--", bash, "-c", script)
}
