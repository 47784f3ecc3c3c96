package runner

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/policy"
)

// runSession assembles the task's agent in ws and runs or continues it: a
// goal task (Goal or PlanFirst) through the goal controller, any other task
// as one agent run. An error means the session could not be assembled; how
// the run itself ended is in the outcome.
func (s *Service) runSession(ctx context.Context, r *run, ws *Workdir) (outcome, error) {
	task := r.task
	provider, model, err := s.cfg.Providers("")
	if err != nil {
		return outcome{}, fmt.Errorf("provider: %w", err)
	}
	confine, err := policy.NewConfinement(policy.SandboxConfig{
		WorkspaceRoot: ws.Dir,
		AllowWrite:    s.set.Sandbox.AllowWrite,
		ForbidRead:    s.set.Sandbox.ForbidRead,
		Bash:          cmp.Or(s.set.Sandbox.Bash, config.BashOff),
		Network:       s.set.Sandbox.Network,
	})
	if err != nil {
		return outcome{}, fmt.Errorf("sandbox: %w", err)
	}
	obs := r.observer(ctx)
	env := agent.ToolEnv{
		Workdir:            ws.Dir,
		BashTimeoutSeconds: s.set.Tools.BashTimeoutSeconds,
		Paths:              confine,
		Shell:              confine.Shell(),
		ShellEnv:           s.shellEnv(),
		Emit:               obs,
	}
	inner := agent.NewToolRegistry()
	if err := inner.AddBuiltins(env, s.set.Tools.Enabled); err != nil {
		return outcome{}, fmt.Errorf("tools: %w", err)
	}
	if plugins := s.taskPlugins(task, ws.Dir); len(plugins) > 0 {
		m, err := StartPlugins(ctx, s.set, plugins, ws.Dir, s.log)
		if err != nil {
			return outcome{}, err
		}
		defer func() {
			// Stop even when ctx is done: the servers are child processes.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = m.Stop(sctx)
		}()
		if _, err := m.AddTools(inner, func(_ context.Context, ev agent.Event) { obs(ev) }); err != nil {
			s.log.Warn("runner: plugin tools", "task", task.ID, "err", err)
		}
	}
	tools, err := r.journaled(inner)
	if err != nil {
		return outcome{}, err
	}
	grants, err := s.st.Grants(ctx, task.ID)
	if err != nil {
		return outcome{}, err
	}
	gate, err := policy.NewGate(policy.GateConfig{
		Policy:   s.pol,
		Posture:  policy.Posture(task.Posture),
		Approver: &broker{s: s, task: task},
		Workdir:  ws.Dir,
		Grants:   grants,
	})
	if err != nil {
		return outcome{}, fmt.Errorf("gate: %w", err)
	}

	history, err := s.st.Messages(ctx, task.ID)
	if err != nil {
		return outcome{}, err
	}
	history, err = r.recoverJournal(ctx, history, tools)
	if err != nil {
		return outcome{}, err
	}
	inbox, err := s.st.TakeInbox(ctx, task.ID)
	if err != nil {
		return outcome{}, err
	}
	ref, _ := s.set.ResolveModel("")
	base := agent.Config{
		Provider:     provider,
		Model:        model,
		Tools:        tools,
		Gate:         gate,
		SystemPrompt: cmp.Or(s.cfg.SystemPrompt, s.set.Agent.SystemPrompt, agent.DefaultSystemPrompt),
		Temperature:  s.set.Agent.Temperature,
		MaxTokens:    ref.MaxOutputTokens,
		MaxSteps:     s.set.Agent.MaxSteps,
		Observer:     obs,
	}
	if task.Goal || task.PlanFirst {
		return s.runGoal(ctx, r, goalSession{base: base, env: env, confine: confine, grants: grants,
			workdir: ws.Dir, history: history, inbox: inbox})
	}
	base.History = history
	ag, err := agent.New(base)
	if err != nil {
		return outcome{}, err
	}
	r.mu.Lock()
	r.ag = ag
	r.mu.Unlock()
	var res agent.Result
	switch {
	case len(history) == 0:
		for _, m := range inbox {
			ag.Steer(m.Text)
		}
		res = ag.Run(ctx, task.Prompt)
	case len(inbox) > 0 && finalAnswer(history):
		for _, m := range inbox[1:] {
			ag.Steer(m.Text)
		}
		res = ag.Run(ctx, inbox[0].Text)
	default:
		for _, m := range inbox {
			ag.Steer(m.Text)
		}
		res = ag.Continue(ctx)
	}
	return s.classify(ctx, r, res), nil
}

// finalAnswer reports whether the conversation ends with an answer that
// has no calls pending, so continuing it needs a new user message.
func finalAnswer(history []agent.Message) bool {
	last := history[len(history)-1]
	return last.Role == agent.RoleAssistant && len(last.ToolCalls) == 0
}
