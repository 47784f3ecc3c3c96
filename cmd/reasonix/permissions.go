package main

import (
	"fmt"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/policy"
	"reasonix/runner"
)

// buildPolicy turns [permissions] into a policy; a bad rule is a configError
// quoting the rule.
func buildPolicy(cfg *config.Config) (*policy.Policy, error) {
	p, err := policy.New(policy.Config{
		Mode:             cfg.Permissions.Mode,
		Allow:            cfg.Permissions.Allow,
		Ask:              cfg.Permissions.Ask,
		Deny:             cfg.Permissions.Deny,
		AllowDynamicBash: cfg.Permissions.AllowDynamicBash,
	})
	if err != nil {
		return nil, &configError{fmt.Errorf("[permissions]: %w", err)}
	}
	return p, nil
}

// buildPermissions assembles the gate and the confinement of a headless run
// in workdir. Nobody can be asked, so the gate has no approver: under the
// ask posture every call that needs a person is refused.
func buildPermissions(cfg *config.Config, posture, workdir string) (*policy.Policy, agent.Gate, agent.ToolEnv, error) {
	pol, err := buildPolicy(cfg)
	if err != nil {
		return nil, nil, agent.ToolEnv{}, err
	}
	gate, err := policy.NewGate(policy.GateConfig{Policy: pol, Posture: policy.Posture(posture), Workdir: workdir})
	if err != nil {
		return nil, nil, agent.ToolEnv{}, &configError{err}
	}
	root := cfg.Sandbox.WorkspaceRoot
	if root == "" {
		root = workdir
	}
	confine, err := policy.NewConfinement(policy.SandboxConfig{
		WorkspaceRoot: root,
		AllowWrite:    cfg.Sandbox.AllowWrite,
		ForbidRead:    cfg.Sandbox.ForbidRead,
		Bash:          cmpString(cfg.Sandbox.Bash, config.BashOff),
		Network:       cfg.Sandbox.Network,
	})
	if err != nil {
		return nil, nil, agent.ToolEnv{}, &configError{fmt.Errorf("[sandbox]: %w", err)}
	}
	env := agent.ToolEnv{
		Workdir:            workdir,
		BashTimeoutSeconds: cfg.Tools.BashTimeoutSeconds,
		Paths:              confine,
		Shell:              confine.Shell(),
		ShellEnv:           runner.ShellEnv(cfg),
	}
	return pol, gate, env, nil
}
