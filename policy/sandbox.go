package policy

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"reasonix/agent"
)

// Kinds of OS sandbox Confinement.SandboxKind reports.
const (
	SandboxLandlock = "landlock" // the kernel's Landlock LSM, applied by a re-exec helper
	SandboxBwrap    = "bwrap"    // bubblewrap: a fresh set of namespaces per command
)

// Modes of SandboxConfig.Bash, as the [sandbox] bash key spells them.
const (
	bashAuto    = "auto"
	bashRequire = "require"
	bashEnforce = "enforce" // the older name of "require"
	bashOff     = "off"
)

// Why Landlock first, bubblewrap second (see docs/SPEC.md, "[sandbox]"):
//
// A fresh bubblewrap namespace per command costs 10–15 ms on top of bash,
// far over the 3 ms budget; Landlock costs one small process image (the
// helper, which restricts itself and then execs bash) and needs no
// namespaces, so it also works where user namespaces are disabled.
//
// Landlock only ever grants: it cannot hide a path beneath a directory it
// lets bash read. The helper therefore never grants "/" when something
// under it is hidden: it walks down from "/" toward every forbid_read
// entry and grants each sibling on the way instead (landlock_cover.go), so
// ~/.ssh stays unreadable while the rest of ~ is readable. Names beneath
// the directories on that walk stay listable (their content does not);
// bubblewrap hides the names too.
//
// What Landlock does not confine — metadata changes (chmod, chown, utimes)
// outside the workspace, connecting to pathname UNIX sockets, UDP before
// ABI 10 — the seccomp supervisor (supervisor.go) decides, together with
// the deny rules at exec; xattrs stay unconfined. bubblewrap is used where Landlock is missing
// (kernel < 5.13, or ABI < 4 while the network must stay off) or where
// this executable cannot act as the helper (SandboxExecMain not wired).

// bashMode parses SandboxConfig.Bash.
func bashMode(s string) (string, error) {
	switch s {
	case "", bashAuto:
		return bashAuto, nil
	case bashRequire, bashEnforce:
		return bashRequire, nil
	case bashOff:
		return bashOff, nil
	}
	return "", fmt.Errorf("policy: sandbox bash %q: want \"auto\", \"require\" (or its older name \"enforce\") or \"off\"", s)
}

// chooseShell picks the sandbox for conf according to mode. It returns a
// nil wrapper when bash runs unconfined (mode off, or auto where no
// sandbox works) and a refusing wrapper when mode is require and nothing
// works. force names one mechanism (tests); "" tries Landlock, then bwrap.
func chooseShell(conf *Confinement, mode, force, bwrapExe string, network bool) (agent.ShellWrapper, string) {
	if mode == bashOff {
		return nil, ""
	}
	var why []string
	if force == "" || force == SandboxLandlock {
		if err := landlockUsable(network); err == nil {
			return newLandlockShell(conf, network), SandboxLandlock
		} else {
			why = append(why, "Landlock: "+err.Error())
		}
	}
	if force == "" || force == SandboxBwrap {
		b := newBwrap(bwrapExe, conf, network)
		if err := bwrapWorks(b); err == nil {
			return b, SandboxBwrap
		} else {
			why = append(why, "bubblewrap: "+err.Error())
		}
	}
	if mode == bashAuto {
		return nil, ""
	}
	return refusingShell{why: strings.Join(why, "; ")}, ""
}

// refusingShell is bash under [sandbox] bash = "require" where no sandbox
// works: every command is refused, none runs unconfined.
type refusingShell struct{ why string }

func (r refusingShell) WrapShell(string, string) ([]string, error) {
	return nil, fmt.Errorf("policy: bash is refused because [sandbox] bash = \"require\" and no OS sandbox works here (%s); install bubblewrap or set [sandbox] bash = \"off\" (\"auto\" runs bash unconfined where no sandbox works)", r.why)
}

// SandboxKind names the OS sandbox bash runs in: SandboxLandlock,
// SandboxBwrap, or "" when bash runs unconfined or is refused. A service
// logs it at start; "" under [sandbox] bash = "auto" means only the
// permission analyser stands between --auto and the host.
func (c *Confinement) SandboxKind() string { return c.kind }

// Supervised reports whether sandboxed bash runs under the seccomp
// supervisor (see supervisor.go): without it, UNIX sockets outside the
// writable roots are reachable, deny rules are not checked at exec and,
// under Landlock, metadata outside the roots can change.
func (c *Confinement) Supervised() bool { return c.sup != nil }

// ShellSandboxed reports whether bash runs inside an OS sandbox. When it
// is false, bash is either unconfined or refused ([sandbox] bash =
// "require" with no sandbox available).
func (c *Confinement) ShellSandboxed() bool { return c.kind != "" }

// ShellRefused reports whether every bash command is refused: [sandbox]
// bash = "require" and no sandbox works on this host.
func (c *Confinement) ShellRefused() bool {
	_, ok := c.shell.(refusingShell)
	return ok
}

// Close removes the private temporary directory Landlock-sandboxed bash
// used. Bash must not run through this confinement (or one Claimed from
// it) afterwards. It is safe to call more than once.
func (c *Confinement) Close() error {
	if c.spawn != nil {
		c.spawn.stop()
	}
	if c.closers != nil {
		c.closers.run()
	}
	if c.sup != nil && c.closers != nil { // not a Claimed one: they share it
		c.sup.close()
	}
	if c.tmp == nil {
		return nil
	}
	return c.tmp.remove()
}

// closers are the cleanups of Claimed sandboxes, run by Close.
type closers struct {
	mu sync.Mutex
	fs []func()
}

func (c *closers) add(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fs = append(c.fs, f)
}

func (c *closers) run() {
	c.mu.Lock()
	fs := c.fs
	c.fs = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// privateTmp is the directory Landlock-sandboxed bash gets as TMPDIR: the
// real /tmp stays read-only, since Landlock cannot give a private mount.
// It is made on first use and shared with Claimed sandboxes.
type privateTmp struct {
	once sync.Once
	dir  string
	err  error
	mu   sync.Mutex
}

func (p *privateTmp) path() (string, error) {
	p.once.Do(func() {
		p.dir, p.err = os.MkdirTemp(tmpParent(), "reasonix-sandbox-tmp-")
	})
	return p.dir, p.err
}

func (p *privateTmp) remove() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Never made yet: make sure it will not be made after Close either.
	p.once.Do(func() { p.err = errors.New("the sandbox was closed") })
	dir := p.dir
	if dir == "" {
		return nil
	}
	p.dir, p.err = "", errors.New("the sandbox was closed")
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("policy: removing the sandbox's private tmp: %w", err)
	}
	return nil
}
