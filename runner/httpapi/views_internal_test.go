package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/runner/store"
	"reasonix/runner/webhook"
)

// TestViewsKeepTheStoreJSON: the store's Result, NotifyTarget and
// Delivery were once put on the wire as they are; the apitype records
// that replace them must encode to the same bytes, every field set.
func TestViewsKeepTheStoreJSON(t *testing.T) {
	usage := agent.Usage{Prompt: 1, Completion: 2, Cached: 3}
	res := &store.Result{Summary: "s", FinalAnswer: "a", DiffStat: "d", Branch: "b", Tokens: usage, Cost: 0.5,
		CostComplete: true, UnpricedTokens: 7, Models: map[string]store.ModelCost{"m": {Calls: 2, Tokens: usage, Cost: 0.25, Priced: true}},
		DurationMS: 9, Error: "e", Reason: "r"}
	same(t, "result", res, viewResult(res))
	same(t, "empty result", &store.Result{}, viewResult(&store.Result{}))

	n := []store.NotifyTarget{{Transport: "slack", Channel: "C1", Thread: "1.2"}, {Transport: "telegram", Channel: "9"}}
	same(t, "notify", n, viewTask(store.Task{Notify: n}).Notify)

	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	s := webhook.Summary{Name: "gh", Kind: "github", Path: "/hooks/gh", Events: []string{"push"}, Filter: "f", Workspace: "w",
		Goal: true, BudgetUSD: 2, Posture: "auto", Recent: []store.Delivery{
			{ID: "d1", Webhook: "gh", DeliveryID: "x", Event: "push", Outcome: store.DeliveryAccepted, Status: 202, Reason: "why", TaskID: "t_1", CreatedAt: now},
			{ID: "d2", Webhook: "gh", Outcome: store.DeliveryRejected, Status: 401, CreatedAt: now},
		}}
	same(t, "webhook", s, ViewWebhook(s))
}

func same(t *testing.T, what string, before, after any) {
	t.Helper()
	a, err := json.Marshal(before)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(after)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("%s:\nbefore %s\nafter  %s", what, a, b)
	}
}

// An approval without a deadline is given as no_deadline, never as a zero
// expires_at; one with a deadline keeps expires_at and no no_deadline.
func TestViewApprovalDeadline(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	none, err := json.Marshal(viewApproval(store.Approval{ID: "a_1", CreatedAt: at}))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(none); !strings.Contains(s, `"no_deadline":true`) || strings.Contains(s, "expires_at") {
		t.Errorf("no deadline = %s", s)
	}
	some, err := json.Marshal(viewApproval(store.Approval{ID: "a_2", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(some); strings.Contains(s, "no_deadline") || !strings.Contains(s, `"expires_at":"2026-01-02T04:04:05Z"`) {
		t.Errorf("a deadline = %s", s)
	}
}
