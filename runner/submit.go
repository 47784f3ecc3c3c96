package runner

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"reasonix/config"
	"reasonix/policy"
	"reasonix/runner/store"
)

// Limits of a TaskRequest.
const (
	MaxPromptBytes = 100 << 10
	// maxGoalPrompt is the goals package's bound on a goal's objective: a
	// goal task's prompt becomes its objective, refused here rather than
	// failing when the task runs.
	maxGoalPrompt = 16 << 10
	maxNotify     = 16
	maxApprovers  = 64
	maxIDLen      = 256
	maxBudgetUSD  = 1e6
)

// TaskRequest is one task handed to Submit.
type TaskRequest struct {
	Source    store.Source // required: api, cli, webhook, cron, slack, telegram
	Requester string       // source-qualified id, e.g. "slack:U123"
	Prompt    string       // required unless Command is set, at most MaxPromptBytes
	// Command names a custom command (without or with its leading slash);
	// its body rendered with Args becomes the prompt, with Prompt, when
	// set, after it as further context. See Service.Recipes.
	Command string
	// Args are the command's arguments; each entry is split on spaces.
	Args      []string
	Goal      bool
	PlanFirst bool
	// PlanOnly makes the task's first turn the Coordinator's plan-only
	// route: the planner's plan is the answer, kept in the conversation,
	// and nothing executes until a message continues the task. It needs
	// [agent] planner_model and is neither a goal nor plan-first.
	PlanOnly bool
	// BudgetUSD is a goal's own cost budget per slice (USD, priced calls);
	// 0 means [agent] goal_budget_usd. Only goal tasks take one.
	BudgetUSD float64
	// Ablate "subagent" runs the task as the control arm of the delegation
	// measurement: no task or fleet tool, no sub-agent skill.
	Ablate string
	// Workspace names a [[workspaces]] entry; "" is a scratch directory.
	Workspace string
	// Posture is the task's posture; "" means [permissions] posture.
	Posture policy.Posture
	// MaxPosture, when set, is the highest posture the requester may ask
	// for (their token's limit); a task above it, the configured default
	// included, is refused with ErrForbidden.
	MaxPosture policy.Posture
	Notify     []store.NotifyTarget
	// DedupeKey makes a repeated intake (a redelivered webhook, a retried
	// API call) return the first task instead of creating another.
	DedupeKey string
	// DedupeKeys are further keys for the same intake: a match on any of
	// them, or on DedupeKey, returns the first task (a webhook replayed
	// under a new delivery id still carries the same signature).
	DedupeKeys []string
	// Origin says what started the task (a webhook's name and delivery
	// id, a schedule's occurrence); it is recorded in the task's first
	// event, task_state, under "origin". Keys and values are short text.
	Origin map[string]string
	// Approvers are the principal ids that may decide the task's
	// approvals; empty means any principal allowed to decide (an approve or
	// admin token, other than the requester unless self-approval is on) for
	// api and cli tasks, and nobody for webhook and cron tasks (unattended).
	Approvers []string
}

// validate checks r against the intake's limits and the configuration
// set, and fills its default posture. It needs no running service, so
// `config check` applies it to the schedules (CheckSchedules).
func (r *TaskRequest) validate(set *config.Config) error {
	if strings.TrimSpace(r.Prompt) == "" {
		return invalidf("the prompt is empty")
	}
	if len(r.Prompt) > MaxPromptBytes {
		return invalidf("the prompt is %d bytes; at most %d are accepted", len(r.Prompt), MaxPromptBytes)
	}
	if !(r.BudgetUSD >= 0) || r.BudgetUSD > maxBudgetUSD {
		return invalidf("budget_usd must be between 0 and %.0f USD", float64(maxBudgetUSD))
	}
	if r.BudgetUSD > 0 && !r.Goal && !r.PlanFirst {
		return invalidf("budget_usd is a goal's cost budget; submit the task as a goal, or bound any task with [runner] max_cost_per_task")
	}
	if r.Ablate != "" && r.Ablate != store.AblateSubagent {
		return invalidf("ablate takes %q", store.AblateSubagent)
	}
	if r.PlanOnly && (r.Goal || r.PlanFirst) {
		return invalidf("plan_only plans one turn of a plain task; it cannot be combined with goal or plan_first")
	}
	if r.PlanOnly && strings.TrimSpace(set.Agent.PlannerModel) == "" {
		// Without a planner the turn would go to the executor: refuse
		// rather than run what was asked only to be planned.
		return invalidf("plan_only needs [agent] planner_model")
	}
	if (r.Goal || r.PlanFirst) && len(r.Prompt) > maxGoalPrompt {
		return invalidf("a goal's prompt is %d bytes; at most %d are accepted", len(r.Prompt), maxGoalPrompt)
	}
	if !utf8.ValidString(r.Prompt) {
		return invalidf("the prompt is not valid UTF-8")
	}
	if r.Posture == "" {
		r.Posture = cmp.Or(set.Permissions.Posture, policy.PostureAsk)
	}
	if _, err := policy.ParsePosture(string(r.Posture)); err != nil {
		return invalidf("%v", err) // a caller that built the value without parsing it
	}
	if err := (Principal{ID: r.Requester, MaxPosture: r.MaxPosture}).allowsPosture(r.Posture); err != nil {
		return err
	}
	if err := checkWorkspace(set, r.Workspace); err != nil {
		return err
	}
	if len(r.Notify) > maxNotify {
		return invalidf("at most %d notify targets are accepted", maxNotify)
	}
	if len(r.Approvers) > maxApprovers {
		return invalidf("at most %d approvers are accepted", maxApprovers)
	}
	for _, a := range r.Approvers {
		if strings.TrimSpace(a) == "" || len(a) > maxIDLen {
			return invalidf("approver ids must be non-empty and at most %d bytes", maxIDLen)
		}
	}
	if len(r.DedupeKey) > maxIDLen || len(r.Requester) > maxIDLen {
		return invalidf("the dedupe key and the requester are limited to %d bytes", maxIDLen)
	}
	if len(r.DedupeKeys) > maxNotify {
		return invalidf("at most %d dedupe keys are accepted", maxNotify)
	}
	for _, k := range r.DedupeKeys {
		if len(k) > maxIDLen {
			return invalidf("the dedupe key and the requester are limited to %d bytes", maxIDLen)
		}
	}
	if len(r.Origin) > maxNotify {
		return invalidf("at most %d origin fields are accepted", maxNotify)
	}
	for k, v := range r.Origin {
		if len(k) > maxIDLen || len(v) > maxIDLen {
			return invalidf("origin fields are limited to %d bytes", maxIDLen)
		}
	}
	return nil
}

// checkWorkspace refuses a workspace name no [[workspaces]] entry of set
// has.
func checkWorkspace(set *config.Config, name string) error {
	if name == "" || slices.ContainsFunc(set.Workspaces, func(w config.Workspace) bool { return w.Name == name }) {
		return nil
	}
	names := make([]string, 0, len(set.Workspaces))
	for _, w := range set.Workspaces {
		names = append(names, w.Name)
	}
	if len(names) == 0 {
		return invalidf("unknown workspace %q: no workspaces are configured", name)
	}
	return invalidf("unknown workspace %q (known: %s)", name, strings.Join(names, ", "))
}

func (s *Service) workspaceSpec(name string) *WorkspaceSpec {
	for _, w := range s.set.Workspaces {
		if w.Name == name {
			return &WorkspaceSpec{Name: w.Name, Repo: w.Repo, Base: w.Base, Setup: w.Setup}
		}
	}
	return nil
}

// Submit validates req and commits the task, its dedupe key and its job in
// one transaction; when it returns nil the task is durable and may be
// acknowledged. A repeated DedupeKey returns the existing task with
// created=false. Errors wrap ErrInvalid (nothing was written) or
// ErrUnavailable (the service is stopping).
func (s *Service) Submit(ctx context.Context, req TaskRequest) (task store.Task, created bool, err error) {
	if s.stopping.Load() {
		return store.Task{}, false, failf(ErrUnavailable, "the service is shutting down; try again shortly")
	}
	if err := s.expandCommand(ctx, &req); err != nil {
		return store.Task{}, false, err
	}
	if err := req.validate(s.set); err != nil {
		return store.Task{}, false, err
	}
	task, created, err = s.st.CreateTask(ctx, store.NewTask{
		Source: req.Source, Requester: req.Requester, Prompt: req.Prompt, Goal: req.Goal,
		PlanFirst: req.PlanFirst, PlanOnly: req.PlanOnly, BudgetUSD: req.BudgetUSD, Ablate: req.Ablate, Workspace: req.Workspace, Posture: req.Posture,
		Notify: req.Notify, Approvers: req.Approvers, Events: s.arrival(req.Source, req.Origin),
	}, append([]string{req.DedupeKey}, req.DedupeKeys...)...)
	if err != nil {
		return store.Task{}, false, mapStoreErr(err, "the task")
	}
	if created {
		s.accepted(task)
	}
	return task, created, nil
}

// arrival is the first event of a task an intake creates, written with it.
func (s *Service) arrival(source store.Source, origin map[string]string) []store.EventInput {
	ev := map[string]any{"state": store.StateQueued, "source": source}
	if len(origin) > 0 {
		ev["origin"] = origin
	}
	return s.encodeAll("", event{"task_state", ev})
}

// accepted counts a task an intake just created and tells its subscribers.
func (s *Service) accepted(task store.Task) {
	s.metrics.submitted.WithLabelValues(string(task.Source)).Inc()
	s.hub.Notify(task.ID)
}
