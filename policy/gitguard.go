package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"reasonix/agent"
)

// A workspace that is itself a git checkout (`reasonix run` in a user's
// repository) holds its git directory inside the writable root, and with
// it everything the owner's next `git status` or `git commit` executes:
// hooks, core.fsmonitor and the other commands config names, filters
// info/attributes selects, a commondir or config.worktree redirecting
// config. Landlock cannot keep a subtree of a granted directory read-only
// (its rules only add), so the guard works the other way round: it
// snapshots those files when the sandbox is made and, before every bash
// command and when the sandbox is closed, puts back anything a command
// changed there. The file tools may not write them at all (WritePath).
// Under bubblewrap the existing ones are also mounted read-only, so there
// a command cannot change them in the first place.
//
// This is detection and repair, not prevention: within one bash command
// the task can still plant a hook and run it — confined, like everything
// else it runs — but it is gone before the next command, and before
// anyone outside the sandbox runs git, unless the process is killed in
// between. Why not bubblewrap for every command on a checkout: it costs
// 11–18 ms more per command than Landlock's thread (docs/SPEC.md §7.1),
// while a guard check costs about 0.2 ms (BenchmarkGitGuardCheck: only
// files whose change time moved are read again).
//
// A worktree the runner made for a task (on a reasonix/ branch) is not
// repaired: the runner refuses such a worktree when it finishes it
// (runner/workspace: ErrTampered), and must see the change to do so. Its
// links are still kept from the file tools and, under bubblewrap, mounted
// read-only.

// Bounds of what the guard keeps: hooks and info are a few small files.
const (
	maxGuardEntries = 2000
	maxGuardBytes   = 8 << 20
)

// gitGuard keeps a checkout's git control files as they were.
type gitGuard struct {
	root    string
	dotGit  string      // <root>/.git
	dir     bool        // .git is a directory (else a file)
	passive bool        // a runner's task worktree: protect, never repair
	orig    fs.FileInfo // the .git directory as it was: replacing it is not repairable

	mu      sync.Mutex
	paths   []string             // protected roots, absent ones included
	entries map[string]guardItem // everything under them, by path
	broken  error                // set once .git was replaced: bash is refused
}

// guardItem is one protected file, directory or link as it was. Content
// is compared, not times or sizes, which a command can set back.
type guardItem struct {
	mode fs.FileMode
	data []byte // file content
	link string // symbolic-link target
	sig  string // statSig when it was read: equal means untouched
}

func (a guardItem) same(b guardItem) bool {
	return a.mode == b.mode && a.link == b.link && bytes.Equal(a.data, b.data)
}

// newGitGuard returns a guard for root's own git control files, or nil
// when root is no checkout (or a runner's task worktree).
func newGitGuard(root string) *gitGuard {
	dotGit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotGit)
	if err != nil {
		return nil
	}
	g := &gitGuard{root: root, dotGit: dotGit, dir: fi.IsDir(), orig: fi}
	switch {
	case fi.IsDir():
		g.paths = gitControl(dotGit)
		if mods, err := os.ReadDir(filepath.Join(dotGit, "modules")); err == nil {
			for _, m := range mods {
				if m.IsDir() {
					g.paths = append(g.paths, gitControl(filepath.Join(dotGit, "modules", m.Name()))...)
				}
			}
		}
		if wts, err := os.ReadDir(filepath.Join(dotGit, "worktrees")); err == nil {
			for _, w := range wts {
				p := filepath.Join(dotGit, "worktrees", w.Name())
				g.paths = append(g.paths, filepath.Join(p, "config.worktree"), filepath.Join(p, "commondir"), filepath.Join(p, "gitdir"))
			}
		}
	case fi.Mode().IsRegular():
		private := linkedGitDir(root)
		if private == "" {
			return nil
		}
		// A runner's task worktree — an object directory of its own (its
		// HEAD is detached, see gitShared), or, prepared before that, on a
		// task branch — is checked by the runner, which refuses it when
		// its links changed: nothing is repaired, so the runner sees it.
		if fi, err := os.Lstat(filepath.Join(private, "objects")); err == nil && fi.IsDir() {
			g.passive = true
		} else if head, err := os.ReadFile(filepath.Join(private, "HEAD")); err == nil &&
			strings.HasPrefix(strings.TrimSpace(string(head)), "ref: "+taskRefDir+"/") {
			g.passive = true
		}
		g.paths = []string{dotGit, filepath.Join(private, "config.worktree"), filepath.Join(private, "commondir"), filepath.Join(private, "gitdir")}
	default:
		return nil
	}
	g.entries = map[string]guardItem{}
	n, size := 0, 0
	for _, p := range g.paths {
		_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil || n >= maxGuardEntries || size >= maxGuardBytes {
				return nil
			}
			it, err := snapItem(path)
			if err != nil {
				return nil
			}
			n, size = n+1, size+len(it.data)
			g.entries[path] = it
			return nil
		})
	}
	return g
}

// gitControl is what git executes or follows in git directory dir.
func gitControl(dir string) []string {
	return []string{
		filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree"), filepath.Join(dir, "commondir"),
		filepath.Join(dir, "hooks"), filepath.Join(dir, "info"),
	}
}

// linkedGitDir is the private git directory root's .git file names, when
// it is one of a repository's worktrees.
func linkedGitDir(root string) string {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if filepath.Base(filepath.Dir(dir)) != "worktrees" {
		return ""
	}
	return filepath.Clean(dir)
}

func snapItem(path string) (guardItem, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return guardItem{}, err
	}
	it := guardItem{mode: fi.Mode(), sig: statSig(fi)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		it.link, err = os.Readlink(path)
	case fi.Mode().IsRegular():
		it.data, err = os.ReadFile(path)
	}
	return it, err
}

// protects reports whether a file tool must not write r: one of the
// guarded paths or anything under them.
func (g *gitGuard) protects(r string) bool {
	if g == nil {
		return false
	}
	if g.dir && r == g.dotGit {
		return true
	}
	for _, p := range g.paths {
		if within(r, p) {
			return true
		}
	}
	return false
}

// readOnly lists the guarded paths that exist, for a sandbox that can
// mount them read-only.
func (g *gitGuard) readOnly() []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, p := range g.paths {
		if p == g.dotGit {
			continue // the .git file's directory is the workspace: a bind would pin it
		}
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// repair puts every guarded path back as it was and returns what it had
// to change ("" when nothing was touched), or an error when .git itself
// was replaced and cannot be put back.
func (g *gitGuard) repair() (string, error) {
	if g == nil || g.passive {
		return "", nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.broken != nil {
		return "", g.broken
	}
	if fi, err := os.Lstat(g.dotGit); g.dir && (err != nil || !os.SameFile(fi, g.orig)) {
		g.broken = fmt.Errorf("policy: a command replaced the workspace's .git directory; no more commands run here, and the repository's git must not be trusted until you check %s", g.dotGit)
		return "", g.broken
	}
	var changed []string
	var failed error
	for _, p := range g.paths {
		c, err := g.repairTree(p)
		changed, failed = append(changed, c...), errors.Join(failed, err)
	}
	if failed != nil {
		// What could not be put back may still be planted: no command
		// runs here any more, and the owner is told where to look.
		g.broken = fmt.Errorf("policy: a command changed the workspace's git control files and they could not be put back (%w); no more commands run here, and the repository's git must not be trusted until you check %s", failed, g.dotGit)
		return "", g.broken
	}
	if len(changed) == 0 {
		return "", nil
	}
	slices.Sort(changed)
	return strings.Join(changed, ", "), nil
}

// lastRepair is the repair when the run ends: no bash call follows to
// carry its result, so it goes to log — what a command changed and was
// put back as a warning, what could not be put back (the owner's next git
// may run what the task planted) as an error naming where to look.
func (g *gitGuard) lastRepair(log *slog.Logger) {
	changed, err := g.repair()
	switch {
	case err != nil:
		log.Error("sandbox: the checkout's git control files are not as they were when the run ended", "git_dir", g.dotGit, "err", err)
	case changed != "":
		log.Warn("sandbox: put back git control files a command changed", "git_dir", g.dotGit, "changed", changed)
	}
}

// repairTree restores one guarded root: extra entries go, changed or
// missing ones come back with their mode. err names what could not be
// removed or restored.
func (g *gitGuard) repairTree(root string) ([]string, error) {
	var changed []string
	var failed []error
	fail := func(err error) {
		if err != nil {
			failed = append(failed, err)
		}
	}
	untouched := map[string]bool{}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		want, ok := g.entries[path]
		if !ok {
			changed = append(changed, path)
			fail(os.RemoveAll(path))
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err == nil && want.sig != "" && statSig(fi) == want.sig {
			untouched[path] = true
		}
		return nil
	})
	// Put back what changed or went missing, parents first.
	var want []string
	for p := range g.entries {
		if within(p, root) {
			want = append(want, p)
		}
	}
	slices.Sort(want)
	for _, p := range want {
		if untouched[p] {
			continue
		}
		it := g.entries[p]
		cur, err := snapItem(p)
		if err == nil && cur.same(it) {
			it.sig = cur.sig // touched, not changed: no need to read it again
			g.entries[p] = it
			continue
		}
		changed = append(changed, p)
		if !(err == nil && it.mode.IsDir() && cur.mode.IsDir()) {
			fail(os.RemoveAll(p))
		}
		switch {
		case it.mode.IsDir():
			fail(os.MkdirAll(p, it.mode.Perm()))
			fail(os.Chmod(p, it.mode.Perm()))
		case it.mode&fs.ModeSymlink != 0:
			fail(os.Symlink(it.link, p))
		default:
			fail(os.WriteFile(p, it.data, it.mode.Perm()))
			fail(os.Chmod(p, it.mode.Perm()))
		}
		if fi, err := os.Lstat(p); err == nil {
			it.sig = statSig(fi)
			g.entries[p] = it
		}
	}
	for i, p := range changed {
		if r, err := filepath.Rel(g.root, p); err == nil {
			changed[i] = r
		}
	}
	return changed, errors.Join(failed...)
}

// wrap returns sh with the guard's repair before every command. A nil
// guard returns sh as it is.
func (g *gitGuard) wrap(sh agent.ShellWrapper) agent.ShellWrapper {
	if g == nil || g.passive {
		return sh
	}
	if st, ok := sh.(agent.ShellStarter); ok {
		return guardedStarter{guardedShell{g: g, inner: sh}, st}
	}
	return guardedShell{g: g, inner: sh}
}

// guardedShell repairs the checkout's git control files before a command
// runs, so a hook or config the previous command planted never meets the
// next git.
type guardedShell struct {
	g     *gitGuard
	inner agent.ShellWrapper // nil: bash runs unconfined
}

func (s guardedShell) WrapShell(workdir, script string) ([]string, error) {
	if _, err := s.g.repair(); err != nil {
		return nil, err
	}
	if s.inner == nil {
		return []string{"bash", "-c", script}, nil
	}
	return s.inner.WrapShell(workdir, script)
}

// Contained passes on whether the sandbox inside outlives nothing
// (agent.ShellContained); unconfined bash does not.
func (s guardedShell) Contained() bool {
	c, ok := s.inner.(agent.ShellContained)
	return ok && c.Contained()
}

// TakeRefusals passes on what the sandbox inside refused
// (agent.ShellRefusals), so a result on a checkout names the deny rule
// like any other.
func (s guardedShell) TakeRefusals(pid int) []string {
	if r, ok := s.inner.(agent.ShellRefusals); ok {
		return r.TakeRefusals(pid)
	}
	return nil
}

var _ agent.ShellRefusals = guardedShell{}

type guardedStarter struct {
	guardedShell
	st agent.ShellStarter
}

func (s guardedStarter) StartShell(cmd *exec.Cmd) error {
	if _, err := s.g.repair(); err != nil {
		return err
	}
	return s.st.StartShell(cmd)
}

// errGitControl is a file tool's write to a guarded path.
var errGitControl = errors.New("part of the repository's git control files (config, hooks, info), which the agent may not change")
