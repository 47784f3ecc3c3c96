package webhook

import (
	"context"

	"reasonix/config"
	"reasonix/policy"
	"reasonix/runner/store"
)

// Summary is one configured webhook with its recent deliveries, as
// `reasonix webhooks list` and GET /api/v1/webhooks show it. It holds no
// secret, not even the variable's value.
type Summary struct {
	Name      string           `json:"name"`
	Kind      string           `json:"kind"`
	Path      string           `json:"path"`
	Events    []string         `json:"events"`
	Filter    string           `json:"filter,omitempty"`
	Workspace string           `json:"workspace,omitempty"`
	Goal      bool             `json:"goal"`
	BudgetUSD float64          `json:"budget_usd,omitempty"`
	Posture   policy.Posture   `json:"posture"`
	Recent    []store.Delivery `json:"recent"`
}

// List summarises entries with at most recent deliveries each (newest
// first; 0 means store.DeliveryHistory). It needs no secrets, so an admin
// command can call it without the service's environment.
func List(ctx context.Context, st *store.Store, entries []config.Webhook, recent int) ([]Summary, error) {
	out := make([]Summary, 0, len(entries))
	for _, e := range entries {
		ds, err := st.Deliveries(ctx, e.Name, recent)
		if err != nil {
			return nil, err
		}
		if ds == nil {
			ds = []store.Delivery{}
		}
		events := e.Events
		if events == nil {
			events = []string{}
		}
		out = append(out, Summary{Name: e.Name, Kind: e.Kind, Path: "/hooks/" + e.Name, Events: events,
			Filter: e.Filter, Workspace: e.Workspace, Goal: e.Goal, BudgetUSD: e.BudgetUSD, Posture: e.Posture, Recent: ds})
	}
	return out, nil
}

// List summarises the handler's webhooks with at most recent deliveries
// each, for GET /api/v1/webhooks.
func (h *Handler) List(ctx context.Context, recent int) ([]Summary, error) {
	entries := make([]config.Webhook, 0, len(h.hooks.order))
	for _, name := range h.hooks.order {
		entries = append(entries, h.hooks.byName[name].cfg)
	}
	return List(ctx, h.st, entries, recent)
}
