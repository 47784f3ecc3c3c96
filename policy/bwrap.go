package policy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// bwrapShell runs bash inside bubblewrap: the filesystem is read-only
// except the workspace, the allow_write roots and a private /tmp;
// forbid_read paths are hidden; the network is unshared unless allowed;
// the sandbox dies with its parent and runs in a new session (no TIOCSTI
// into the caller's terminal).
type bwrapShell struct {
	exe     string
	conf    *Confinement
	network bool

	once  sync.Once
	extra []string // flags the probe found necessary here
	bash  string
	err   error
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
// When bubblewrap is missing or does not work it returns an error and the
// script must not run: with bash = "enforce" it never runs unconfined.
func (b *bwrapShell) WrapShell(workdir, script string) ([]string, error) {
	b.once.Do(b.probe)
	if b.err != nil {
		return nil, b.err
	}
	return b.argv(workdir, script, b.extra), nil
}

// probe runs the sandbox once, with the same shape real commands use, and
// remembers which variant works: some hosts need an explicit user
// namespace, others (root in a container) work without one.
func (b *bwrapShell) probe() {
	exe, err := exec.LookPath(b.exe)
	if err != nil {
		b.err = b.refusal(fmt.Sprintf("%s was not found", b.exe))
		return
	}
	b.exe = exe
	if b.bash, err = exec.LookPath("bash"); err != nil {
		b.err = b.refusal("bash was not found")
		return
	}
	var last string
	for _, extra := range [][]string{nil, {"--unshare-user"}} {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		argv := b.argv(b.conf.root, "exit 0", extra)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		if err == nil {
			b.extra = extra
			return
		}
		last = strings.TrimSpace(stderr.String())
		if last == "" {
			last = err.Error()
		}
	}
	b.err = b.refusal("it failed to start: " + last)
}

func (b *bwrapShell) refusal(why string) error {
	return fmt.Errorf("policy: bash is refused because [sandbox] bash = \"enforce\" and the bubblewrap sandbox cannot run (%s); install bubblewrap or set [sandbox] bash = \"off\"", why)
}

func (b *bwrapShell) argv(workdir, script string, extra []string) []string {
	a := []string{b.exe, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"}
	if !b.network {
		a = append(a, "--unshare-net")
	}
	a = append(a, extra...)
	a = append(a, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	for _, w := range b.conf.writable {
		if _, err := os.Stat(w); err == nil {
			a = append(a, "--bind", w, w)
		}
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
