package httpapi

import (
	"time"

	"reasonix/runner"
	"reasonix/runner/apitype"
	"reasonix/runner/store"
	"reasonix/runner/webhook"
)

// The API's records are the apitype ones; these turn the service's values
// into them. Lists the API shows are never null: an empty list is [].

func viewTask(t store.Task) apitype.Task {
	v := apitype.Task{ID: t.ID, Source: apitype.Source(t.Source), Requester: t.Requester, Prompt: t.Prompt,
		Goal: t.Goal, PlanFirst: t.PlanFirst, PlanOnly: t.PlanOnly, BudgetUSD: t.BudgetUSD, Ablate: t.Ablate, Workspace: t.Workspace,
		Posture: apitype.Posture(t.Posture), Notify: make([]apitype.NotifyTarget, 0, len(t.Notify)),
		Approvers: nonNil(t.Approvers), State: apitype.TaskState(t.State), Attempt: t.Attempt,
		Result: viewResult(t.Result), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		StartedAt: optTime(t.StartedAt), FinishedAt: optTime(t.FinishedAt)}
	for _, n := range t.Notify {
		v.Notify = append(v.Notify, apitype.NotifyTarget{Transport: n.Transport, Channel: n.Channel, Thread: n.Thread})
	}
	return v
}

func viewResult(r *store.Result) *apitype.Result {
	if r == nil {
		return nil
	}
	v := &apitype.Result{Summary: r.Summary, FinalAnswer: r.FinalAnswer, DiffStat: r.DiffStat, Branch: r.Branch,
		Tokens: apitype.Usage(r.Tokens), Cost: r.Cost, CostComplete: r.CostComplete, UnpricedTokens: r.UnpricedTokens,
		DurationMS: r.DurationMS, Error: r.Error, Reason: r.Reason, Publish: r.Publish, PublishError: r.PublishError}
	if r.PR != nil {
		v.PR = &apitype.PullRequest{URL: r.PR.URL, Number: r.PR.Number, State: r.PR.State, Conflicts: r.PR.Conflicts, BaseCommit: r.PR.BaseCommit, Mergeable: r.PR.Mergeable}
		if ci := r.PR.CI; ci != nil {
			v.PR.CI = &apitype.CI{State: ci.State, Commit: ci.Commit, Fixes: ci.Fixes, Since: ci.Since}
			for _, c := range ci.Checks {
				v.PR.CI.Checks = append(v.PR.CI.Checks, apitype.CICheck(c))
			}
		}
	}
	for _, d := range r.Deliverables {
		v.Deliverables = append(v.Deliverables, apitype.Deliverable{Path: d.Path, Description: d.Description, Bytes: d.Bytes})
	}
	if d := r.Delegation; d != nil {
		// The same ten fields: a counter added to one and not the other
		// stops this conversion from compiling.
		dv := apitype.Delegation(*d)
		v.Delegation = &dv
	}
	if r.Models != nil {
		v.Models = make(map[string]apitype.ModelCost, len(r.Models))
		for name, m := range r.Models {
			v.Models[name] = apitype.ModelCost{Calls: m.Calls, Tokens: apitype.Usage(m.Tokens), Cost: m.Cost, Priced: m.Priced}
		}
	}
	return v
}

func viewEvent(e store.Event) apitype.Event {
	return apitype.Event{Seq: e.Seq, Type: e.Type, Payload: e.Payload, Time: e.Time}
}

func viewApproval(a store.Approval) apitype.Approval {
	return apitype.Approval{ID: a.ID, TaskID: a.TaskID, Tool: a.Tool, Subject: a.Subject, CallHash: a.CallHash,
		Preview: a.Preview, Requester: a.Requester, Approvers: nonNil(a.Approvers), Scopes: nonNil(a.Scopes),
		AlwaysScope: runner.SuggestedScope(a.Scopes),
		State:       apitype.ApprovalState(a.State), Decision: apitype.Decision(a.Decision), DecidedBy: a.DecidedBy,
		Scope: a.Scope, Note: a.Note, CreatedAt: a.CreatedAt, ExpiresAt: optTime(a.ExpiresAt), NoDeadline: a.NoDeadline(),
		DecidedAt: optTime(a.DecidedAt), Instructors: nonNil(a.Instructors)}
}

func viewGrant(g store.StandingGrant) apitype.Grant {
	return apitype.Grant{ID: g.ID, Scope: g.Scope, GrantFor: string(g.For), Name: g.Name, GrantedBy: g.GrantedBy,
		ApprovalID: g.ApprovalID, TaskID: g.TaskID, CreatedAt: g.CreatedAt, ExpiresAt: optTime(g.ExpiresAt),
		RevokedAt: optTime(g.RevokedAt), RevokedBy: g.RevokedBy, Uses: g.Uses, LastUsedAt: optTime(g.LastUsedAt)}
}

func viewSchedule(s runner.Schedule) apitype.Schedule {
	return apitype.Schedule{Name: s.Name, Cron: s.Cron, Timezone: s.Timezone, Enabled: s.Enabled, Paused: s.Paused,
		PausedReason: s.PausedReason, NextRun: optTime(s.Next), LastRun: optTime(s.LastRunAt),
		LastTaskID: s.LastTaskID, LastOutcome: s.LastOutcome, Failures: s.Failures, MaxFailures: s.MaxFailures,
		Skipped: s.Skipped, LastSkippedAt: optTime(s.LastSkippedAt), Missed: s.Missed,
		Overlap: s.Overlap, CatchUp: s.CatchUp, Posture: apitype.Posture(s.Posture),
		LastSuccess: optTime(s.LastSuccessAt), Health: s.Health, HealthReason: s.HealthReason}
}

// ViewNode is a node as GET /api/v1/nodes shows it; `reasonix nodes
// --json`, which reads the store directly, prints the same record.
func ViewNode(n runner.NodeInfo) apitype.Node {
	return apitype.Node{ID: n.ID, Version: n.Version, Addr: n.Addr, State: apitype.NodeState(n.State),
		Leader: n.Leader, Stale: n.Stale, MaxTasks: n.MaxTasks, Running: nonNil(n.Running),
		StartedAt: n.StartedAt, HeartbeatAt: n.HeartbeatAt}
}

// ViewWebhook is a webhook as GET /api/v1/webhooks shows it; `reasonix
// webhooks list --json`, which reads the store directly, prints the same.
func ViewWebhook(s webhook.Summary) apitype.Webhook {
	v := apitype.Webhook{Name: s.Name, Kind: s.Kind, Path: s.Path, Events: s.Events, Filter: s.Filter,
		Workspace: s.Workspace, Goal: s.Goal, BudgetUSD: s.BudgetUSD, Posture: apitype.Posture(s.Posture),
		Recent: make([]apitype.Delivery, 0, len(s.Recent))}
	for _, d := range s.Recent {
		v.Recent = append(v.Recent, apitype.Delivery{ID: d.ID, Webhook: d.Webhook, DeliveryID: d.DeliveryID,
			Event: d.Event, Outcome: apitype.DeliveryOutcome(d.Outcome), Status: d.Status, Reason: d.Reason,
			TaskID: d.TaskID, CreatedAt: d.CreatedAt})
	}
	return v
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// nonNil copies s, so a view never aliases the service's slices, and
// turns nil into [] on the wire.
func nonNil(s []string) []string { return append([]string{}, s...) }
