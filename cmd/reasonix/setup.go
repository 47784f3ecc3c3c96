package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/policy"
	"reasonix/runner"
)

// runSetup is everything a run needs, built from configuration and flags.
type runSetup struct {
	cfg            *config.Config
	workdir        string
	provider       agent.Provider
	model          string
	tools          *agent.ToolRegistry
	gate           agent.Gate
	policy         *policy.Policy
	env            agent.ToolEnv // what built-in tools (and sub-agents' tools) are built with
	systemPrompt   string
	temperature    *float64
	maxTokens      int
	maxSteps       int
	transcript     *agent.Transcript
	transcriptPath string
	closers        []func()
	// observer receives events raised outside the harness (plugin
	// progress); runCommand sets it before the run starts.
	observer agent.Observer
}

// emit passes events raised outside the harness (a plan update, plugin
// progress) to the run's observer once runCommand has set it.
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

// loadConfig loads the layered configuration; every failure is a configError.
func loadConfig(file string) (*config.Config, error) {
	cfg, err := config.Load(config.LoadOptions{File: file})
	if err != nil {
		return nil, &configError{err}
	}
	return cfg, nil
}

// prepareRun turns flags and configuration into a ready run. Every problem a
// person must fix before anything runs is a configError or a usageError.
func prepareRun(o runOptions, stderr io.Writer) (s *runSetup, err error) {
	cfg, err := loadConfig(o.configFile)
	if err != nil {
		return nil, err
	}
	posture, err := choosePosture(o, cfg)
	if err != nil {
		return nil, err
	}
	workdir, err := workspaceDir(o.workspace)
	if err != nil {
		return nil, err
	}
	provider, ref, err := buildProvider(cfg, o.model)
	if err != nil {
		return nil, err
	}
	pol, gate, env, err := buildPermissions(cfg, posture, workdir)
	if err != nil {
		return nil, err
	}
	s = &runSetup{}
	env.Emit = s.emit // todo_write's plan updates
	tools := agent.NewToolRegistry()
	if err := tools.AddBuiltins(env, cfg.Tools.Enabled); err != nil {
		return nil, &configError{fmt.Errorf("[tools] enabled: %w", err)}
	}

	*s = runSetup{
		cfg:          cfg,
		workdir:      workdir,
		policy:       pol,
		env:          env,
		provider:     provider,
		model:        ref.Model,
		tools:        tools,
		gate:         gate,
		systemPrompt: cmpString(cfg.Agent.SystemPrompt, agent.DefaultSystemPrompt),
		temperature:  cfg.Agent.Temperature,
		maxTokens:    ref.MaxOutputTokens,
		maxSteps:     cfg.Agent.MaxSteps,
	}
	if o.maxSteps > 0 {
		s.maxSteps = o.maxSteps
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if len(cfg.Plugins) > 0 {
		log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		plugins, err := runner.StartPlugins(context.Background(), cfg, cfg.Plugins, workdir, log)
		if err != nil {
			return nil, &configError{fmt.Errorf("[[plugins]]: %w", err)}
		}
		s.closers = append(s.closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			plugins.Stop(ctx)
		})
		if _, err := plugins.AddTools(tools, func(_ context.Context, ev agent.Event) { s.emit(ev) }); err != nil {
			fmt.Fprintf(stderr, "reasonix: plugins: %v\n", err)
		}
	}
	f, path, err := transcriptFile(cfg.DataDir())
	if err != nil {
		return nil, err
	}
	s.transcript, s.transcriptPath = agent.NewTranscript(f), path
	s.closers = append(s.closers, func() { f.Close() })
	return s, nil
}

// choosePosture combines --auto, --permission-mode and [permissions] posture.
func choosePosture(o runOptions, cfg *config.Config) (string, error) {
	mode := strings.ToLower(strings.TrimSpace(o.mode))
	switch mode {
	case "", "ask", "auto", "yolo":
	default:
		return "", usageErrorf("--permission-mode must be ask, auto or yolo, not %q", o.mode)
	}
	if o.auto {
		if mode != "" && mode != "auto" {
			return "", usageErrorf("--auto conflicts with --permission-mode %s", mode)
		}
		return "auto", nil
	}
	if mode != "" {
		return mode, nil
	}
	return cmpString(cfg.Permissions.Posture, "ask"), nil
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

// buildProvider resolves the model reference and builds its provider. A
// missing key is reported before anything runs, naming the variable.
func buildProvider(cfg *config.Config, modelRef string) (agent.Provider, config.ProviderRef, error) {
	ref, err := cfg.ResolveModel(modelRef)
	if err != nil {
		if errors.Is(err, config.ErrNoProviders) {
			return nil, ref, &configError{fmt.Errorf("no model is configured: add a [[providers]] entry to ./reasonix.toml or %s (see reasonix.example.toml)",
				filepath.Join(cmpString(cfg.Home(), "~/.reasonix"), config.UserFile))}
		}
		return nil, ref, &configError{err}
	}
	var key string
	if ref.APIKeyEnv != "" {
		v, ok := os.LookupEnv(ref.APIKeyEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return nil, ref, &configError{fmt.Errorf("provider %q needs its API key in $%s, which is not set (%s)", ref.Name, ref.APIKeyEnv, ref.Source)}
		}
		key = strings.TrimSpace(v)
	}
	p, err := agent.Providers.New(agent.ProviderConfig{
		Name:          ref.Name,
		Kind:          ref.Kind,
		BaseURL:       ref.BaseURL,
		RequestURL:    ref.RequestURL,
		Model:         ref.Model,
		APIKey:        key,
		ContextWindow: ref.ContextWindow,
		IdleTimeout:   ref.IdleTimeout,
		MaxRetries:    ref.MaxRetries,
	})
	if err != nil {
		return nil, ref, &configError{fmt.Errorf("%w (%s)", err, ref.Source)}
	}
	return p, ref, nil
}

func cmpString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
