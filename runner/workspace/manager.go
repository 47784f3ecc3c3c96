package workspace

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultSetupTimeout bounds one setup command when Config.SetupTimeout is
// zero.
const DefaultSetupTimeout = 10 * time.Minute

// minGit is the oldest git this package works with (--end-of-options).
var minGit = [2]int{2, 24}

// Config of a Manager.
type Config struct {
	Root         string        // the data dir subdirectory for everything here (absolute), e.g. <data dir>/workspaces
	Keep         bool          // keep worktrees/scratch dirs after Finish (default: remove them; the branch stays)
	SetupTimeout time.Duration // per setup command; default 10m
	Env          []string      // environment for git and setup commands (nil = process env); the runner strips secrets
	Logger       *slog.Logger  // nil discards
}

// Manager prepares and finishes task workspaces under one root. It is safe
// for concurrent use; git commands on one repository are serialized, those
// on different repositories run in parallel.
type Manager struct {
	root         string // absolute and symlink-free
	keep         bool
	setupTimeout time.Duration
	gitPath      string
	gitEnv       []string // for git: the configured env, cleaned, non-interactive, no system or global config
	netEnv       []string // for fetch and push: gitEnv but with the operator's system and global config
	protected    []string // -c safe.directory=… carried over from the operator's config (see New)
	setupEnv     []string // for setup commands: the configured env, cleaned
	log          *slog.Logger

	mu    sync.Mutex
	locks map[string]chan struct{} // per repository (common git dir), a 1-slot semaphore

	baseCache baseCache // ReadBase's trees by commit
}

// New validates cfg, creates the root directory (0700) and checks that a
// usable git is installed.
func New(cfg Config) (*Manager, error) {
	if cfg.Root == "" {
		return nil, fmt.Errorf("workspace: Config.Root is empty: set it to a directory under the data dir")
	}
	if !filepath.IsAbs(cfg.Root) {
		return nil, fmt.Errorf("workspace: Config.Root %q is not absolute", cfg.Root)
	}
	if cfg.SetupTimeout < 0 {
		return nil, fmt.Errorf("workspace: Config.SetupTimeout %v is negative", cfg.SetupTimeout)
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("workspace: git not found in PATH: install git (workspaces run on git worktrees): %w", err)
	}
	if err := os.MkdirAll(cfg.Root, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: create root: %w", err)
	}
	root, err := filepath.EvalSymlinks(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("workspace: resolve root: %w", err)
	}
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	env = cleanEnv(env)
	m := &Manager{
		root:         root,
		keep:         cfg.Keep,
		setupTimeout: cmp.Or(cfg.SetupTimeout, DefaultSetupTimeout),
		gitPath:      gitPath,
		// No prompts: a task runs unattended, and a prompt would only hang.
		gitEnv:   hardenedEnv(append(append([]string(nil), env...), "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never")),
		netEnv:   append(append([]string(nil), env...), "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never"),
		setupEnv: env,
		log:      cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		locks:    make(map[string]chan struct{}),
	}
	if err := m.checkGit(); err != nil {
		return nil, err
	}
	// The service's git reads no global config, but safe.directory there
	// is how an operator lets it use a repository another user owns; git
	// honours it on the command line too, and it runs nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if dirs, err := m.runNet(ctx, root, "config", "--get-all", "safe.directory"); err == nil {
		for d := range strings.SplitSeq(dirs, "\n") {
			if d != "" {
				m.protected = append(m.protected, "-c", "safe.directory="+d)
				if d != "*" {
					// The service runs repository-wide commands in the
					// git directory itself, which git checks by that path.
					m.protected = append(m.protected, "-c", "safe.directory="+filepath.Join(d, ".git"))
				}
			}
		}
	}
	return m, nil
}

// checkGit runs `git version` and refuses a git too old for the commands
// used here.
func (m *Manager) checkGit() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := m.git(ctx, m.root, "version")
	if err != nil {
		return fmt.Errorf("workspace: %s does not run: %w", m.gitPath, err)
	}
	major, minor, ok := parseGitVersion(out)
	if !ok {
		return nil // an unusual build string: let the commands themselves tell
	}
	if major < minGit[0] || major == minGit[0] && minor < minGit[1] {
		return fmt.Errorf("workspace: %s is too old (%q): install git %d.%d or newer", m.gitPath, out, minGit[0], minGit[1])
	}
	return nil
}

// parseGitVersion reads "git version 2.39.5" (and vendor suffixes such as
// "2.39.5 (Apple Git-143)").
func parseGitVersion(s string) (major, minor int, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(s), "git version ")
	if !found {
		return 0, 0, false
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return 0, 0, false
	}
	parts := strings.SplitN(fields[0], ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0, false
	}
	return major, minor, true
}

// Root returns the manager's root directory, absolute and symlink-free.
func (m *Manager) Root() string { return m.root }

// lock takes the lock of one repository, identified by its common git
// directory, and returns its release. Waiting honours ctx. It guards what
// the tasks of a repository share: adding and removing worktrees, fetching
// the base, and importing a task's objects into the shared store; a task's
// own commit, index and branch need no lock. Within the process a
// semaphore serializes the holders; across processes (nodes sharing a
// local repository) a file lock in its git directory does (repolock.go).
func (m *Manager) lock(ctx context.Context, repo string) (func(), error) {
	m.mu.Lock()
	ch, ok := m.locks[repo]
	if !ok {
		ch = make(chan struct{}, 1)
		m.locks[repo] = ch
	}
	m.mu.Unlock()
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("workspace: waiting for repository %s: %w", repo, ctx.Err())
	}
	if m.within(repo) {
		// A clone under the root is this process's alone (one process
		// owns a data dir); the semaphore is the whole lock.
		return func() { <-ch }, nil
	}
	unlockFile, err := lockFile(ctx, repo)
	if err != nil {
		<-ch
		return nil, err
	}
	return func() {
		unlockFile()
		<-ch
	}, nil
}

// within reports whether path is strictly inside the root: the guard every
// removal passes.
func (m *Manager) within(path string) bool {
	rel, err := filepath.Rel(m.root, path)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// ScratchDir is where task taskID's scratch directory is, whether or not
// it exists ("" for an id that cannot name one).
func (m *Manager) ScratchDir(taskID string) string {
	if validTaskID(taskID) != nil {
		return ""
	}
	return m.scratchDir(taskID)
}

func (m *Manager) scratchDir(taskID string) string {
	return filepath.Join(m.root, "scratch", taskID)
}

func (m *Manager) worktreeDir(taskID string) string {
	return filepath.Join(m.root, "worktrees", taskID)
}

func (m *Manager) cloneDir(name string) string {
	return filepath.Join(m.root, "repos", name)
}
