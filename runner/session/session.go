package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"reasonix/agent/recipe"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/goals"
	"reasonix/internal/redact"
	"reasonix/mcp"
	"reasonix/policy"
)

// Config says what to assemble. Settings, Workdir and Model are required.
type Config struct {
	// Settings is the loaded configuration.
	Settings *config.Config
	// Policy is the parsed [permissions]; nil builds it from Settings.
	Policy *policy.Policy
	// Workdir is the absolute, symlink-free workspace directory.
	Workdir string
	// Posture resolves the calls the policy asks about; "" is PostureAsk.
	Posture policy.Posture
	// Model is the resolved model (see ResolveModel).
	Model Model
	// Models resolves the model a sub-agent asks for (a fleet item's
	// "model" reference); nil runs every sub-agent on Model.
	Models func(ref string) (Model, error)
	// Prices prices model calls for the goal's cost and cost budget; nil
	// builds one from Settings.
	Prices *Prices
	// Approver decides the parent agent's calls that need a person; nil
	// means nobody can be asked, so they are refused as unattended.
	Approver policy.Approver
	// Files, when set, does the file tools' final read and write
	// (agent.ToolEnv.Files): an editor's buffers over ACP. Nil is the disk.
	Files agent.FileIO
	// Grants are the task's grants (see policy.GateConfig).
	Grants []string
	// Standing supplies the standing grants ("Allow always") of the
	// task's workspace, schedule or webhook to every gate of the session,
	// sub-agents' too; nil means none.
	Standing policy.Standing
	// Plugins are the MCP servers started for this session; nil starts none.
	Plugins []config.Plugin
	// ShellEnv is the environment of shell commands; nil is ShellEnv(Settings).
	ShellEnv []string
	// SystemPrompt replaces [agent] system_prompt and the default prompt.
	SystemPrompt string
	// Instructions is the repository's and the user's instruction text
	// (recipe.LoadInstructions), appended to the parent's and every
	// sub-agent's system prompt: the same bytes on every request, so the
	// provider's prompt cache keeps hitting. "" adds nothing.
	Instructions string
	// DirInstructions reads the instruction files of the directories on
	// the way to a file the parent's file tools touch; nil reads none.
	DirInstructions DirInstructions
	// MaxSteps bounds the model requests of one agent run; 0 is [agent] max_steps.
	MaxSteps int
	// Observer receives the parent agent's events and the events raised
	// outside the harness (todo_write's plan, plugin progress); nil drops them.
	Observer agent.Observer
	// Logger receives plugin diagnostics; nil uses slog.Default().
	Logger *slog.Logger
	// Redactor masks secrets in every tool's output; nil builds one from
	// Secrets(Settings).
	Redactor *redact.Redactor
	// WrapTools wraps the parent's tools before the agent sees them (the
	// runner's write-ahead journal); nil keeps them as built.
	WrapTools func(*agent.ToolRegistry) (*agent.ToolRegistry, error)
	// Profiles are the sub-agent profiles fleet and task items may name
	// (read before the run, never from the task's own changes); nil has
	// none.
	Profiles *recipe.Profiles
	// CacheScope names whose build cache the shell writes: the task's
	// requester, so one principal's planted module never reaches
	// another's task; "" is `reasonix run`'s own.
	CacheScope string
	// Memory and History back the memory and history tools (left out
	// when nil); Recall is the agents' agent.Config.Recall.
	Memory  agent.Memory
	History agent.History
	Recall  func(ctx context.Context, text string) string
	// HumanOnly are tools only a person may allow in this session, under
	// every posture (see policy.GateConfig).
	HumanOnly []string
	// Skills are the skills of the session (read before the run, never
	// from the task's own changes): their index ends the parent's system
	// prompt, read_skill and run_skill reach them, and, when Profiles is
	// nil, their runAs: subagent ones are the profiles. Nil has none.
	Skills *recipe.Skills
}

// Session is an assembled session. Agent is ready for agent.New (add the
// History to continue a conversation) or to be a goal's base through Goal.
// Close it to stop its plugins.
type Session struct {
	Agent       agent.Config
	Policy      *policy.Policy
	Confinement *policy.Confinement
	// Env is what the built-in tools were built with; sub-agents start
	// from it.
	Env agent.ToolEnv

	cfg     Config
	plugins *mcp.Manager
	// gate is the session's gate (Agent.Gate before anyone wraps it); its
	// sub-agents' gates share its posture (SetPosture).
	gate *policy.Gate
	// skillHost runs run_skill's sub-agent skills (Goal, SkillHost); nil
	// builds them directly.
	skillHost atomic.Pointer[goals.Host]
	// noDelegation: the control arm of --ablate subagent (NoDelegation).
	noDelegation atomic.Bool
}

// SetPosture changes the session's tool-approval posture in place: the
// session's gate and every sub-agent gate it made or makes decide their
// next calls under p (one already asking a person ends under the old
// one). Nothing else is rebuilt: the conversation, the grants, the MCP
// plugins and the background jobs all stay. A posture the parse rejects
// changes nothing.
func (s *Session) SetPosture(p policy.Posture) error { return s.gate.SetPosture(p) }

// Posture is the session's tool-approval posture now.
func (s *Session) Posture() policy.Posture { return s.gate.Posture() }

// NoDelegation makes the session the control arm of `--ablate subagent`
// (seed §3.17) with no delegation at all: run_skill refuses sub-agent
// skills (inline skills stay), and a goal built later gets no task or
// fleet tool (GoalConfig.NoDelegation does the same). The seed's arm
// still let a runAs: subagent skill start a child; here subagent_runs of
// the control arm is 0 by construction.
func (s *Session) NoDelegation() { s.noDelegation.Store(true) }

// New assembles a session. An error names the part of the configuration
// that is wrong ("[permissions]: …", "[sandbox]: …", "[tools] enabled: …",
// "[[plugins]]: …"); nothing is left running after one.
func New(ctx context.Context, cfg Config) (_ *Session, err error) {
	if cfg.Settings == nil || cfg.Workdir == "" || cfg.Model.Provider == nil {
		return nil, errors.New("session: Settings, Workdir and Model are required")
	}
	set := cfg.Settings
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.ShellEnv == nil {
		cfg.ShellEnv = ShellEnv(set)
	}
	if cfg.Redactor == nil {
		cfg.Redactor = redact.New(Secrets(set)...)
	}
	if cfg.Observer == nil {
		cfg.Observer = func(agent.Event) {}
	}
	if cfg.Prices == nil {
		cfg.Prices = NewPrices(set)
	}
	if cfg.Policy == nil {
		if cfg.Policy, err = NewPolicy(set); err != nil {
			return nil, err
		}
	}
	if cfg.Profiles == nil && cfg.Skills != nil {
		cfg.Profiles = cfg.Skills.Profiles()
	}
	allowWrite := set.Sandbox.AllowWrite
	if cache := cacheDir(set, cfg.CacheScope); cache != "" && cmp.Or(set.Sandbox.Bash, config.BashAuto) != config.BashOff {
		if err := prepareCache(cache); err != nil {
			return nil, fmt.Errorf("the build cache: %w", err)
		}
		allowWrite = append(slices.Clone(allowWrite), cache)
		cfg.ShellEnv = withToolCaches(cfg.ShellEnv, set, cache)
	}
	confine, err := policy.NewConfinement(policy.SandboxConfig{
		WorkspaceRoot: cmp.Or(set.Sandbox.WorkspaceRoot, cfg.Workdir),
		AllowWrite:    allowWrite,
		ForbidRead:    forbidRead(set),
		AllowSockets:  set.Sandbox.AllowSockets,
		Bash:          cmp.Or(set.Sandbox.Bash, config.BashAuto),
		Network:       set.Sandbox.Network,
		ExecDenied:    execDenied(cfg.Policy),
		ExecDenyNames: cfg.Policy.DeniedCommands(),
		Logger:        cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("[sandbox]: %w", err)
	}
	gate, err := policy.NewGate(policy.GateConfig{
		Policy:         cfg.Policy,
		Posture:        cfg.Posture,
		Approver:       cfg.Approver,
		Workdir:        cfg.Workdir,
		Grants:         cfg.Grants,
		Standing:       cfg.Standing,
		ShellSandboxed: confine.ShellSandboxed(),
		AllowWrite:     confine.Writable()[1:],
		AllowRead:      append(confine.Writable()[1:], set.Sandbox.AllowRead...),
		HumanOnly:      cfg.HumanOnly,
		Network:        set.Sandbox.Network,
	})
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	// A task worktree's git writes objects to its own directory (policy:
	// Confinement.GitEnv), never to the store other tasks read.
	cfg.ShellEnv = append(slices.Clip(cfg.ShellEnv), confine.GitEnv()...)
	s := &Session{cfg: cfg, Policy: cfg.Policy, Confinement: confine, gate: gate}
	s.Env = agent.ToolEnv{
		Workdir:            cfg.Workdir,
		BashTimeoutSeconds: set.Tools.BashTimeoutSeconds,
		Paths:              confine,
		Shell:              confine.Shell(),
		ShellEnv:           cfg.ShellEnv,
		Emit:               cfg.Observer,
		Memory:             cfg.Memory,
		History:            cfg.History,
		Vision:             cfg.Model.Vision,
		Files:              cfg.Files,
	}
	if cfg.Skills.Len() > 0 {
		s.Env.Skills = &sessionSkills{s: s, set: cfg.Skills}
	}
	// Background jobs end with the session (Close): a job never outlives
	// the run that started it.
	s.Env.Jobs = agent.NewJobs()
	if set.Tools.ProtectsChangedFiles() {
		s.Env.Observed = agent.NewObserved()
	}
	tools := agent.NewToolRegistry()
	if err := tools.AddBuiltins(s.Env, set.Tools.Enabled); err != nil {
		return nil, fmt.Errorf("[tools] enabled: %w", err)
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if len(cfg.Plugins) > 0 {
		if s.plugins, err = StartPlugins(ctx, set, cfg.Plugins, cfg.Workdir, cfg.Logger); err != nil {
			return nil, fmt.Errorf("[[plugins]]: %w", err)
		}
		if _, err := s.plugins.AddTools(tools, func(_ context.Context, ev agent.Event) { cfg.Observer(ev) }); err != nil {
			// A plugin tool whose name collides is left out; the rest work.
			cfg.Logger.Warn("session: plugin tools", "err", err)
		}
	}
	if cfg.DirInstructions != nil {
		n := &nestedInstructions{read: cfg.DirInstructions, workdir: cfg.Workdir, emit: cfg.Observer, seen: map[string]bool{}}
		if tools, err = nestTools(tools, n); err != nil {
			return nil, err
		}
	}
	if tools, err = redactTools(tools, cfg.Redactor); err != nil {
		return nil, err
	}
	if cfg.WrapTools != nil {
		if tools, err = cfg.WrapTools(tools); err != nil {
			return nil, err
		}
	}
	s.Agent = agent.Config{
		Provider:     cfg.Model.Provider,
		Model:        cfg.Model.Name,
		Tools:        tools,
		Gate:         gate,
		SystemPrompt: cmp.Or(cfg.SystemPrompt, set.Agent.SystemPrompt, agent.DefaultSystemPrompt) + cfg.Instructions + cfg.Skills.Index(),
		Temperature:  set.Agent.Temperature,
		MaxTokens:    cfg.Model.MaxTokens,
		Effort:       cfg.Model.Effort,
		MaxSteps:     cmp.Or(cfg.MaxSteps, set.Agent.MaxSteps),
		Observer:     cfg.Observer,
		// Every agent of the session (goal turns and sub-agents copy these)
		// compacts at the same trigger of the same model's window.
		ContextWindow: cfg.Model.ContextWindow,
		CompactRatio:  set.Agent.EffectiveCompactRatio(),
		Recall:        cfg.Recall,
	}
	return s, nil
}

// NewPolicy parses [permissions] into a policy; an error quotes the rule.
func NewPolicy(set *config.Config) (*policy.Policy, error) {
	p, err := policy.New(policy.Config{
		Mode:             set.Permissions.Mode,
		Allow:            set.Permissions.Allow,
		Ask:              set.Permissions.Ask,
		Deny:             set.Permissions.Deny,
		AllowDynamicBash: set.Permissions.AllowDynamicBash,
	})
	if err != nil {
		return nil, fmt.Errorf("[permissions]: %w", err)
	}
	return p, nil
}

// Close stops the session's background jobs and plugins (child processes),
// even when the run's context has ended, and releases the sandbox (its
// private tmp). It is safe to call more than once.
func (s *Session) Close() {
	s.Env.Jobs.Close()
	if s.Confinement != nil {
		if err := s.Confinement.Close(); err != nil {
			s.cfg.Logger.Warn("session: closing the sandbox", "err", err)
		}
	}
	if s.plugins == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.plugins.Stop(ctx); err != nil {
		s.cfg.Logger.Warn("session: stopping plugins", "err", err)
	}
	s.plugins = nil
}

// execDenied is the deny-rule matcher the sandbox checks every exec
// against, or nil when no Bash deny rule names a command (execs then go
// unchecked, at no cost).
func execDenied(p *policy.Policy) func(string, []string) (string, bool) {
	if len(p.DeniedCommands()) == 0 {
		return nil
	}
	return p.ExecDenied
}
