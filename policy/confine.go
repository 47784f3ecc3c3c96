package policy

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"reasonix/agent"
)

// SandboxConfig is the `[sandbox]` table plus the task's workspace.
type SandboxConfig struct {
	// WorkspaceRoot confines writers; required and absolute. The runner
	// passes the task's workspace when the configuration leaves it empty.
	WorkspaceRoot string
	// AllowWrite are further directories writers may change.
	AllowWrite []string
	// ForbidRead are files or directories readers (and sandboxed bash) may
	// not see. Entries of all three lists expand ${VAR}, ${VAR:-default},
	// $VAR and a leading ~, and must then be absolute.
	ForbidRead []string
	// Bash is "auto" (default: bash runs in the OS sandbox — Landlock,
	// else bubblewrap — and unconfined where neither works), "require"
	// (bash is refused where no sandbox works; "enforce" is its older
	// name) or "off" (bash runs unconfined).
	Bash string
	// Network lets sandboxed bash reach the network.
	Network bool
	// LookupEnv expands variables; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Bwrap is the bubblewrap executable; empty means "bwrap" on PATH.
	Bwrap string
	// AllowSockets are pathname UNIX sockets outside the writable roots
	// that sandboxed bash may connect to (absolute; expanded like
	// AllowWrite). Every other socket outside those roots is refused.
	AllowSockets []string
	// ExecDenied, when not nil, is asked at every exec inside the sandbox
	// (see supervisor.go): name is the command's name — as called, after
	// symbolic links, or the denied binary a copy has the content of —
	// and argv the arguments as the program passed them. It returns the
	// deny rule that refuses the exec, if any; the exec then fails with
	// EPERM. It is called from the supervisor's goroutines, concurrently.
	ExecDenied func(name string, argv []string) (rule string, denied bool)
	// ExecDenyNames are the command names ExecDenied can refuse; their
	// binaries on PATH are identified by content too, so a copy of one
	// is refused like the original.
	ExecDenyNames []string
	// Logger receives what the sandbox finds when no call is there to
	// report it: above all the git guard's last repair when the
	// Confinement closes (a control file a command planted, or one that
	// could not be put back). Nil means slog.Default().
	Logger *slog.Logger

	// force restricts the choice to one mechanism (SandboxLandlock or
	// SandboxBwrap); tests use it to exercise both on one host.
	force string
}

// Refusal reasons of a Confinement, for errors.Is.
var (
	ErrOutsideRoots = errors.New("outside the writable directories")
	ErrForbidden    = errors.New("hidden by the sandbox configuration")
)

// Confinement implements agent.PathGuard: writers stay inside the
// workspace and allow_write, readers stay out of forbid_read. It is
// immutable and safe for concurrent use.
type Confinement struct {
	root      string
	writable  []string // resolved; root first
	forbidden []string // resolved
	// gitShared is the part of a git worktree's shared repository the
	// task's own commits need (see gitShared); the sandbox leaves it
	// writable and the rest of the repository's .git read-only.
	gitShared []string
	git       *gitGuard // a checkout's own git control files (gitguard.go); nil when none
	shell     agent.ShellWrapper
	kind      string      // SandboxKind
	tmp       *privateTmp // Landlock's private TMPDIR, shared with Claimed
	closers   *closers    // what Close ends besides tmp
	sup       *supervisor // nil: no seccomp supervisor; shared with Claimed
	spawn     *spawners   // the filtered thread StartShell starts bash from
}

var _ agent.PathGuard = (*Confinement)(nil)

// NewConfinement validates c and resolves its roots. Each bad entry yields
// an error naming the field and the entry.
func NewConfinement(c SandboxConfig) (*Confinement, error) {
	lookup := c.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var errs []error
	resolveEntry := func(field, entry string) string {
		// An absolute entry is taken literally: it is a path already (the
		// configuration expands variables at load), and a directory named
		// with a "$" must not be read as a variable.
		p, err := entry, error(nil)
		if !filepath.IsAbs(entry) {
			p, err = expandVars(entry, lookup)
		}
		if err == nil && !filepath.IsAbs(p) {
			err = errors.New("the path must be absolute (use ${HOME} for home-relative paths)")
		}
		if err == nil {
			p, err = resolvePath(p, "/")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("policy: sandbox %s %q: %w", field, entry, err))
			return ""
		}
		return p
	}
	if strings.TrimSpace(c.WorkspaceRoot) == "" {
		return nil, errors.New("policy: sandbox workspace_root is required")
	}
	conf := &Confinement{root: resolveEntry("workspace_root", c.WorkspaceRoot)}
	conf.writable = append(conf.writable, conf.root)
	for _, e := range c.AllowWrite {
		conf.writable = append(conf.writable, resolveEntry("allow_write", e))
	}
	for _, e := range c.ForbidRead {
		conf.forbidden = append(conf.forbidden, resolveEntry("forbid_read", e))
	}
	var sockets []string
	for _, e := range c.AllowSockets {
		sockets = append(sockets, resolveEntry("allow_sockets", e))
	}
	mode, err := bashMode(c.Bash)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	conf.gitShared = gitShared(conf.root)
	conf.tmp, conf.closers = &privateTmp{}, &closers{}
	if conf.git = newGitGuard(conf.root); conf.git != nil {
		log := cmp.Or(c.Logger, slog.Default())
		conf.closers.add(func() { conf.git.lastRepair(log) })
	}
	conf.shell, conf.kind = chooseShell(conf, mode, c.force, c.Bwrap, c.Network)
	conf.spawn = &spawners{}
	if conf.kind != "" && supervisorUsable() == nil {
		conf.sup = newSupervisor(supervisorConfig{execDenied: c.ExecDenied, denyNames: c.ExecDenyNames, allowSockets: sockets})
	}
	return conf, nil
}

// Root returns the resolved workspace root.
func (c *Confinement) Root() string { return c.root }

// Writable returns the resolved directories writers may change: the
// workspace root first, then the allow_write roots. The slice is a copy.
func (c *Confinement) Writable() []string { return slices.Clone(c.writable) }

// ReadPath resolves p (relative to the workspace) and refuses it when it
// lies under a forbid_read entry. Tools that walk directories should call
// it for every entry they open, since a directory may contain hidden paths.
func (c *Confinement) ReadPath(p string) (string, error) {
	r, err := resolvePath(p, c.root)
	if err != nil {
		return "", err
	}
	if c.isForbidden(r) {
		return "", fmt.Errorf("policy: cannot read %q: %w; it is off limits for this agent", p, ErrForbidden)
	}
	return r, nil
}

// WritePath resolves p (relative to the workspace) and refuses it unless it
// lies inside the workspace or an allow_write directory and outside every
// forbid_read entry.
func (c *Confinement) WritePath(p string) (string, error) {
	r, err := resolvePath(p, c.root)
	if err != nil {
		return "", err
	}
	if c.isForbidden(r) {
		return "", fmt.Errorf("policy: cannot write %q: %w; it is off limits for this agent", p, ErrForbidden)
	}
	if c.git.protects(r) {
		return "", fmt.Errorf("policy: cannot write %q: it is %w", p, errGitControl)
	}
	for _, root := range c.writable {
		if within(r, root) {
			return r, nil
		}
	}
	where := ""
	if r != filepath.Clean(p) {
		where = " (it resolves to " + r + ")"
	}
	return "", fmt.Errorf("policy: cannot write %q%s: it is %w; writable: %s", p, where, ErrOutsideRoots, strings.Join(c.writable, ", "))
}

func (c *Confinement) isForbidden(r string) bool {
	for _, f := range c.forbidden {
		if within(r, f) {
			return true
		}
	}
	return false
}

// Shell returns the wrapper that runs bash inside the OS sandbox, nil when
// bash runs unconfined (`[sandbox] bash = "off"`, or "auto" where no
// sandbox works), or a wrapper refusing every command ("require" where no
// sandbox works).
func (c *Confinement) Shell() agent.ShellWrapper { return c.git.wrap(c.shell) }

// ErrNoSandbox means bash does not run in an OS sandbox, so none can
// narrow what it writes.
var ErrNoSandbox = errors.New("policy: bash is not sandboxed")

// Claimed returns a sandbox for bash that may write only under paths (a
// sub-agent's write claim; each resolved like a writer's path, so it must
// lie inside the writable roots) and the private /tmp; readers are hidden
// from forbid_read as usual. A claimed path that does not exist yet cannot
// be created from inside the sandbox. It fails with ErrNoSandbox when the
// confinement does not sandbox bash at all.
func (c *Confinement) Claimed(paths []string) (agent.ShellWrapper, error) {
	if !c.ShellSandboxed() {
		return nil, ErrNoSandbox
	}
	sub := &Confinement{root: c.root, forbidden: c.forbidden, kind: c.kind, tmp: c.tmp, sup: c.sup, spawn: &spawners{}}
	for _, p := range paths {
		r, err := c.WritePath(p)
		if err != nil {
			return nil, err
		}
		sub.writable = append(sub.writable, r)
	}
	if len(sub.writable) == 0 {
		return nil, errors.New("policy: a claimed sandbox needs at least one path")
	}
	switch sh := c.shell.(type) {
	case *bwrapShell:
		b := *sh
		b.conf = sub
		sub.shell = &b
		c.closers.add(sub.spawn.stop)
	case *landlockShell:
		l := *sh
		l.conf = sub
		sub.shell = &l
		c.closers.add(sub.spawn.stop)
	default:
		return nil, ErrNoSandbox
	}
	return c.git.wrap(sub.shell), nil
}
