package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/policy"
	"reasonix/runner/session"
	"reasonix/runner/workspace"
)

// runSetup is everything a run needs: the session assembled from
// configuration and flags, and the run's transcript.
type runSetup struct {
	cfg            *config.Config
	session        *session.Session
	transcript     *agent.Transcript
	transcriptPath string
	closers        []func()
	// observer receives the run's events, including those raised outside
	// the harness (a plan update, plugin progress); runCommand sets it
	// before the run starts.
	observer agent.Observer
	// cost prices the run's calls and enforces --max-cost; runCommand sets it.
	cost *costMeter
}

// emit passes the session's events to the run's observer once runCommand
// has set it.
func (s *runSetup) emit(e agent.Event) {
	if s.observer != nil {
		s.observer(e)
	}
}

func (s *runSetup) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// loadConfig loads the layered configuration as the commands that act in
// the current directory do: its own reasonix.toml and .mcp.json count only
// as far as they tighten, until the directory is trusted (`reasonix trust`,
// or trust = true for one run). Every failure is a configError.
func loadConfig(file string, trust bool) (*config.Config, error) {
	cfg, err := config.Load(config.LoadOptions{File: file, RequireTrust: true, TrustProject: trust})
	if err != nil {
		return nil, &configError{err}
	}
	return cfg, nil
}

// prepareRun turns flags and configuration into a ready run. Every problem a
// person must fix before anything runs is a configError or a usageError.
// Nobody can be asked during a headless run, so the session has no
// approver: under the ask posture every call that needs a person is refused.
func prepareRun(o runOptions, stderr io.Writer) (_ *runSetup, err error) {
	cfg, err := loadConfig(o.configFile, o.trust)
	if err != nil {
		return nil, err
	}
	if err := sealEnvironment(cfg); err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stderr, "reasonix: warning: %s\n", w)
	}
	posture, err := choosePosture(o, cfg)
	if err != nil {
		return nil, err
	}
	workdir, err := workspaceDir(o.workspace)
	if err != nil {
		return nil, err
	}
	model, err := session.ResolveModel(cfg, o.model)
	if err != nil {
		return nil, &configError{err}
	}
	s := &runSetup{cfg: cfg}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	f, path, err := transcriptFile(cfg.DataDir())
	if err != nil {
		return nil, err
	}
	s.transcript, s.transcriptPath = agent.NewTranscript(f), path
	s.closers = append(s.closers, func() { f.Close() })
	if err := detachCheckout(s, workdir, stderr); err != nil {
		return nil, err
	}
	// A person's own checkout: its skills are theirs, like its instruction files.
	skills := session.CheckoutSkills(cfg.Home(), &cfg.Skills, workdir)
	if !cfg.Skills.SuppressWarnings {
		for _, w := range skills.Warnings {
			fmt.Fprintf(stderr, "reasonix: warning: %s\n", w)
		}
	}
	sess, err := session.New(context.Background(), session.Config{
		Skills:   skills,
		Settings: cfg,
		Workdir:  workdir,
		Posture:  posture,
		Model:    model,
		Models:   func(ref string) (session.Model, error) { return session.ResolveModel(cfg, ref) },
		Plugins:  cfg.Plugins,
		MaxSteps: o.maxSteps,
		// A person's own checkout: its instruction files are theirs.
		Instructions:    session.CheckoutInstructions(cfg.Home(), workdir).Text,
		DirInstructions: session.CheckoutDirInstructions(workdir),
		Observer:        s.emit,
		Logger:          slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, &configError{err}
	}
	s.session = sess
	s.closers = append(s.closers, sess.Close)
	if c := sess.Confinement; c.ShellRefused() || c.SandboxKind() == "" && cmpString(cfg.Sandbox.Bash, config.BashAuto) != config.BashOff {
		fmt.Fprintln(stderr, "reasonix: warning: no OS sandbox works here (Landlock ABI 4+ or bubblewrap); see reasonix doctor")
	}
	return s, nil
}

// detachCheckout detaches HEAD of a linked worktree on a reasonix/ branch
// before the sandbox is built, so that no command of the run can write the
// shared refs (it could move the other reasonix/ branches otherwise), and
// registers the step that moves the branch to the run's commit at the end,
// after the session (and every sandboxed process) is closed.
func detachCheckout(s *runSetup, workdir string, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), checkoutTimeout)
	defer cancel()
	co, err := workspace.DetachCheckout(ctx, workdir)
	if err != nil {
		return &commandError{"run", err}
	}
	if co == nil {
		return nil
	}
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), checkoutTimeout)
		defer cancel()
		if _, err := co.Restore(ctx); err != nil {
			fmt.Fprintf(stderr, "reasonix: warning: %v\n", err)
		}
	})
	return nil
}

// checkoutTimeout bounds each of the git commands that detach a checkout
// and move its branch back.
const checkoutTimeout = 30 * time.Second

// choosePosture combines --auto, --posture and [permissions] posture.
func choosePosture(o runOptions, cfg *config.Config) (policy.Posture, error) {
	flag, err := policy.ParsePosture(o.mode)
	if err != nil {
		return "", usageErrorf("--posture: %v", err)
	}
	switch {
	case o.auto && o.mode != "" && flag != policy.PostureAuto:
		return "", usageErrorf("--auto conflicts with --posture %s", flag)
	case o.auto:
		return policy.PostureAuto, nil
	case o.mode != "":
		return flag, nil
	}
	return cmp.Or(cfg.Permissions.Posture, policy.PostureAsk), nil
}

func workspaceDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageErrorf("--workspace: %v", err)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", usageErrorf("--workspace %s is not a directory", dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// buildProvider resolves the model reference and builds its provider, for
// the commands that check the configuration.
func buildProvider(cfg *config.Config, modelRef string) (agent.Provider, config.ProviderRef, error) {
	m, err := session.ResolveModel(cfg, modelRef)
	if err != nil {
		return nil, config.ProviderRef{}, &configError{err}
	}
	ref, _ := cfg.ResolveModel(modelRef)
	return m.Provider, ref, nil
}

// buildPolicy parses [permissions]; a bad rule is a configError quoting it.
func buildPolicy(cfg *config.Config) (*policy.Policy, error) {
	p, err := session.NewPolicy(cfg)
	if err != nil {
		return nil, &configError{err}
	}
	return p, nil
}

func cmpString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
