package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/policy"
)

// Collaboration modes (session/set_mode).
const (
	modeNormal = "normal"
	modePlan   = "plan"
	modeGoal   = "goal"
)

// planNote leads a prompt in plan mode: the model reads and plans, and
// the gate refuses every writer, so the note only saves it a refusal.
const planNote = "[Plan mode: read and investigate only, do not change files or run writing commands; answer with a plan.]\n\n"

// controls are a session's independent selectors.
type controls struct {
	mode     string
	model    string // model reference; "" = the configured default
	workMode string
	posture  policy.Posture
	// effort is the reasoning effort of the session's requests, one of
	// config.Efforts; "" is the work mode's (see requestEffort).
	effort string
}

// requestEffort is the effort the session's requests carry: the effort
// option when it is set, else the work mode's — economy thinks little
// (low), delivery thinks hard (high), balanced keeps the provider's own
// setting ("").
func (c controls) requestEffort() string {
	if c.effort != "" {
		return c.effort
	}
	switch c.workMode {
	case "economy":
		return agent.EffortLow
	case "delivery":
		return agent.EffortHigh
	}
	return ""
}

// modeGate asks the session's gate, except that in plan mode it refuses
// every writer first: plan mode can only remove what the policy allows.
// It reads the mode at each call, so a set_mode changes it in place,
// without rebuilding the session.
func (l *live) modeGate(g agent.Gate) agent.Gate {
	return agent.GateFunc(func(ctx context.Context, c agent.Call) (agent.Verdict, error) {
		if !c.ReadOnly && l.plan.Load() {
			return agent.Verdict{Code: agent.RefusedByRule, Reason: "The session is in plan mode: " + c.Tool + " changes files or runs commands. Read and investigate, then answer with your plan; the user switches modes to carry it out."}, nil
		}
		return g.Authorize(ctx, c)
	})
}

type modeInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// modes is the modes state of session/new and session/load.
func (c controls) modes() map[string]any {
	return map[string]any{
		"currentModeId": c.mode,
		"availableModes": []modeInfo{
			{modeNormal, "Normal", "Work on the task; calls that need a person are asked here"},
			{modePlan, "Plan", "Read and plan only; no file changes or writing commands"},
			{modeGoal, "Goal", "Keep going until the goal is complete or blocked, with sub-agent fleets"},
		},
	}
}

type configValue struct {
	Value string `json:"value"`
	Name  string `json:"name"`
}

type configOption struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Description  string        `json:"description,omitempty"`
	Type         string        `json:"type"`
	CurrentValue string        `json:"currentValue"`
	Options      []configValue `json:"options"`
}

// effortDefault is the effort option's value for "the provider's own
// setting" ([[providers]] effort, or the model's default).
const effortDefault = "default"

// configOptions are the session's selectors: model, effort, work mode and
// tool approval.
func (l *live) configOptions() []configOption {
	set := l.set
	current := agent.ModelRef(l.sess.Agent)
	if l.ctl.model != "" {
		current = l.ctl.model
	}
	var models []configValue
	seen := map[string]bool{}
	add := func(ref string) {
		if ref != "" && !seen[ref] {
			seen[ref] = true
			models = append(models, configValue{ref, ref})
		}
	}
	add(current)
	for _, p := range set.Providers {
		if len(p.Models) == 0 {
			add(p.Name)
		}
		for _, m := range p.Models {
			add(p.Name + "/" + m)
		}
	}
	var work []configValue
	for _, w := range WorkModes {
		work = append(work, configValue{w, strings.ToUpper(w[:1]) + w[1:]})
	}
	efforts := []configValue{{effortDefault, "Provider default"}}
	for _, e := range config.Efforts {
		efforts = append(efforts, configValue{e, strings.ToUpper(e[:1]) + e[1:]})
	}
	return []configOption{
		{ID: "model", Name: "Model", Type: "select", CurrentValue: current, Options: models},
		{ID: "effort", Name: "Effort", Type: "select", CurrentValue: cmp.Or(l.ctl.effort, effortDefault), Options: efforts,
			Description: "Reasoning effort of the model's requests"},
		{ID: "work_mode", Name: "Work mode", Type: "select", CurrentValue: l.ctl.workMode, Options: work,
			Description: "With the effort option at its default: economy asks for low reasoning effort, delivery for high, balanced keeps the provider's"},
		{ID: "tool_approval", Name: "Tool approval", Type: "select", CurrentValue: string(l.ctl.posture), Options: []configValue{
			{"ask", "Ask for writes and commands"}, {"auto", "Allow ordinary writes in the workspace"}, {"yolo", "Allow everything but deny rules"},
		}},
	}
}

// state is what session/new, load and resume answer with.
func (l *live) state() map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]any{"modes": l.ctl.modes(), "configOptions": l.configOptions()}
}

// apply changes the session's controls. A new model or request effort
// (the effort option or the work mode's) rebuilds the controller through
// runner/session, keeping the conversation and the grants made so far;
// not while a prompt runs. Everything else changes in place, keeping the
// MCP plugins, the background jobs and the conversation: a new tool
// approval changes only the gate's posture (session.SetPosture), and may
// change while a prompt runs — the calls after it are decided under the
// new posture; a new collaboration mode changes what the next prompt is
// (plan, goal) and the plan gate (modeGate), not while a prompt runs,
// whose turn was chosen by the mode it started in.
func (l *live) apply(ctx context.Context, change func(*controls) error) *sdk.RequestError {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.ctl
	if err := change(&next); err != nil {
		return invalidParams("%v", err)
	}
	if next == l.ctl {
		return nil
	}
	if next.model == l.ctl.model && next.requestEffort() == l.ctl.requestEffort() {
		if next.mode != l.ctl.mode && l.turn != nil {
			return invalidRequest("session %s is running a prompt; change its mode after the turn", l.id)
		}
		if next.posture != l.ctl.posture {
			if err := l.sess.SetPosture(next.posture); err != nil {
				return invalidParams("tool_approval: %v", err)
			}
		}
		l.plan.Store(next.mode == modePlan)
		l.ctl = next
		return nil
	}
	if l.turn != nil {
		return invalidRequest("session %s is running a prompt; change it after the turn", l.id)
	}
	var grants []string
	if g, ok := l.sess.Agent.Gate.(*policy.Gate); ok {
		grants = g.Grants()
	}
	sess, ag, err := l.build(ctx, next, l.agent.Messages(), grants)
	if err != nil {
		return openError(err)
	}
	old := l.sess
	l.sess, l.agent, l.ctl = sess, ag, next
	l.plan.Store(next.mode == modePlan)
	old.Close()
	return nil
}

type controlParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
	ModelID   string `json:"modelId"`
	ConfigID  string `json:"configId"`
	Value     string `json:"value"`
}

func (a *Agent) setMode(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p controlParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	l, rerr := a.session(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	if err := l.apply(ctx, func(c *controls) error {
		switch p.ModeID {
		case modeNormal, modePlan, modeGoal:
			c.mode = p.ModeID
		case "default": // the legacy selector: Normal + Ask
			c.mode, c.posture = modeNormal, policy.PostureAsk
		case "auto": // the legacy selector: Normal + Yolo
			c.mode, c.posture = modeNormal, policy.PostureYolo
		default:
			return fmt.Errorf("unknown mode %q (normal, plan or goal)", p.ModeID)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	l.mu.Lock()
	mode, opts := l.ctl.mode, l.configOptions()
	l.mu.Unlock()
	a.notifyRaw(l.id, map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": mode})
	a.notifyRaw(l.id, map[string]any{"sessionUpdate": "config_option_update", "configOptions": opts})
	return map[string]any{}, nil
}

func (a *Agent) setConfigOption(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p controlParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	l, rerr := a.session(p.SessionID)
	if rerr != nil {
		return nil, rerr
	}
	if err := l.apply(ctx, func(c *controls) error {
		switch p.ConfigID {
		case "model":
			if _, err := l.models(p.Value); err != nil {
				return fmt.Errorf("model %q: %v", p.Value, err)
			}
			c.model = p.Value
		case "effort":
			switch {
			case p.Value == effortDefault:
				c.effort = ""
			case slices.Contains(config.Efforts, p.Value):
				c.effort = p.Value
			default:
				return fmt.Errorf("effort %q: %s or %s", p.Value, effortDefault, strings.Join(config.Efforts, ", "))
			}
		case "work_mode":
			if !validWorkMode(p.Value) {
				return fmt.Errorf("work_mode %q: economy, balanced or delivery", p.Value)
			}
			c.workMode = p.Value
		case "tool_approval":
			pos, err := policy.ParsePosture(p.Value)
			if err != nil || p.Value == "" {
				return fmt.Errorf("tool_approval %q: ask, auto or yolo", p.Value)
			}
			c.posture = pos
		default:
			return fmt.Errorf("unknown config option %q (model, effort, work_mode, tool_approval)", p.ConfigID)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]any{"configOptions": l.configOptions()}, nil
}

// setModel is session/set_model, for clients older than config options.
func (a *Agent) setModel(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p controlParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(controlParams{SessionID: p.SessionID, ConfigID: "model", Value: p.ModelID})
	if _, err := a.setConfigOption(ctx, b); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

func (a *Agent) notifyRaw(id string, update map[string]any) {
	if err := a.conn.SendNotification(context.Background(), "session/update", map[string]any{"sessionId": id, "update": update}); err != nil {
		a.cfg.Logger.Debug("acp: session/update not sent", "err", err)
	}
}
