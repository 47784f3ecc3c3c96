package runner

import (
	"context"
	"strings"
	"sync"
	"time"

	"reasonix/policy"
	"reasonix/runner/store"
)

// Standing grants ("Allow always"): an approver with the grant or admin
// role allows a call for every later task of its workspace, schedule or
// webhook. The store keeps them (standing_grants); every node's gates
// consult them through taskStanding, with the cache below.

// grantTarget is what a standing grant applies to: a workspace, a
// schedule or a webhook, by name.
type grantTarget struct {
	For  store.GrantFor
	Name string
}

// grantTargets are the targets whose standing grants apply to task t: its
// workspace, and the schedule or webhook that started it.
func grantTargets(t store.Task) []grantTarget {
	var out []grantTarget
	if t.Workspace != "" {
		out = append(out, grantTarget{store.GrantForWorkspace, t.Workspace})
	}
	if name, ok := origin(t, store.SourceCron, "schedule:"); ok {
		out = append(out, grantTarget{store.GrantForSchedule, name})
	}
	if name, ok := origin(t, store.SourceWebhook, "webhook:"); ok {
		out = append(out, grantTarget{store.GrantForWebhook, name})
	}
	return out
}

// origin returns the name of the schedule or webhook that started t, read
// from its requester (the principal "schedule:<name>" or "webhook:<name>",
// which only the service itself can be).
func origin(t store.Task, src store.Source, prefix string) (string, bool) {
	if t.Source != src {
		return "", false
	}
	name, ok := strings.CutPrefix(t.Requester, prefix)
	return name, ok && name != ""
}

// grantTargetOf resolves the grant_for an approver chose for task t: ""
// is the narrowest the task has (its schedule or webhook, else its
// workspace). A target the task does not have is an ErrInvalid.
func grantTargetOf(t store.Task, grantFor string) (grantTarget, error) {
	targets := grantTargets(t)
	if grantFor == "" {
		if len(targets) == 0 {
			return grantTarget{}, invalidf("task %s has no workspace, schedule or webhook to grant for", t.ID)
		}
		return targets[len(targets)-1], nil
	}
	for _, g := range targets {
		if string(g.For) == grantFor {
			return g, nil
		}
	}
	if !store.GrantFor(grantFor).Valid() {
		return grantTarget{}, invalidf("grant_for %q is not workspace, schedule or webhook", grantFor)
	}
	return grantTarget{}, invalidf("task %s has no %s to grant for", t.ID, grantFor)
}

// standingCache is a node's copy of the standing grants, compiled per set
// of targets (a task's workspace plus its schedule or webhook).
//
// How it stays right across nodes without a read per decision: a gate
// first matches against the copy as it is. A match is then recorded with
// store.UseStandingGrant, which succeeds only while the grant stands — a
// grant revoked or expired on any node allows nothing, and the gate asks
// for a fresh copy. No match also asks for a fresh copy before a person
// is asked. Fresh means: read the store's epoch (one row, moved in the
// same transaction as every add and revoke); only when it moved, or a
// grant of the copy has expired since, are the grants read again. So a
// grant added or revoked anywhere applies from the next decision on, and
// the common case — a call a grant covers — costs a lookup in memory and
// the audit write.
type standingCache struct {
	mu      sync.Mutex
	entries map[string]*standingEntry
}

type standingEntry struct {
	set     *policy.GrantSet
	epoch   int64
	staleAt time.Time // the first expiry among the grants; zero: none
}

func targetsKey(ts []grantTarget) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(string(t.For))
		b.WriteByte(0)
		b.WriteString(t.Name)
		b.WriteByte(0)
	}
	return b.String()
}

// standingGrants returns the compiled grants of targets; see standingCache.
func (s *Service) standingGrants(ctx context.Context, targets []grantTarget, fresh bool) (*policy.GrantSet, error) {
	key := targetsKey(targets)
	c := &s.standing
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	now := s.now()
	if e != nil && !fresh && (e.staleAt.IsZero() || now.Before(e.staleAt)) {
		return e.set, nil
	}
	if e != nil {
		epoch, err := s.st.StandingGrantEpoch(ctx)
		if err != nil {
			return nil, err
		}
		if epoch == e.epoch && (e.staleAt.IsZero() || now.Before(e.staleAt)) {
			return e.set, nil
		}
	}
	var (
		rules   []policy.StandingRule
		epoch   int64
		staleAt time.Time
	)
	for i, t := range targets {
		list, ep, err := s.st.StandingGrants(ctx, store.StandingGrantFilter{For: t.For, Name: t.Name})
		if err != nil {
			return nil, err
		}
		// The lowest epoch read: should a grant land between two reads,
		// the next fresh look sees the epoch moved and reads again.
		if i == 0 || ep < epoch {
			epoch = ep
		}
		for _, g := range list {
			if !g.Live(now) {
				continue
			}
			rules = append(rules, policy.StandingRule{ID: g.ID, Scope: g.Scope})
			if !g.ExpiresAt.IsZero() && (staleAt.IsZero() || g.ExpiresAt.Before(staleAt)) {
				staleAt = g.ExpiresAt
			}
		}
	}
	set, err := policy.NewGrantSet(rules)
	if err != nil {
		// The store validates scopes on the way in; a row that does not
		// parse (written by another version) is left out, the rest apply.
		s.log.Warn("runner: standing grants", "err", err)
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*standingEntry{}
	}
	c.entries[key] = &standingEntry{set: set, epoch: epoch, staleAt: staleAt}
	c.mu.Unlock()
	return set, nil
}

// taskStanding is the policy.Standing of one task's gates.
type taskStanding struct {
	s       *Service
	task    store.Task
	targets []grantTarget
}

var _ policy.Standing = (*taskStanding)(nil)

func (ts *taskStanding) StandingGrants(ctx context.Context, fresh bool) (*policy.GrantSet, error) {
	if len(ts.targets) == 0 {
		return nil, nil
	}
	return ts.s.standingGrants(ctx, ts.targets, fresh)
}

// UseStandingGrant counts the use in the store and records it on the task
// as the event grant_used (the audit of every call a grant allowed).
func (ts *taskStanding) UseStandingGrant(ctx context.Context, g policy.StandingRule, req policy.Request) (bool, error) {
	ok, err := ts.s.st.UseStandingGrant(ctx, g.ID)
	if err != nil || !ok {
		return false, err
	}
	ts.s.metrics.approvals.WithLabelValues("standing_grant").Inc()
	ts.s.emitLogged(ctx, ts.task.ID, "grant_used", map[string]any{
		"grant_id": g.ID, "scope": g.Scope, "tool": req.Call.Tool, "call_id": req.Call.ID,
		"subject": truncate(req.Subject, maxPreview),
	})
	return true, nil
}

// GrantFilter selects standing grants for Grants. Zero fields do not
// filter.
type GrantFilter struct {
	For  string // workspace, schedule or webhook
	Name string
	All  bool // revoked ones too
}

// Grants lists the standing grants matching f, oldest first. Any
// principal may list them (they hold rules, no secrets).
func (s *Service) Grants(ctx context.Context, f GrantFilter) ([]store.StandingGrant, error) {
	if f.For != "" && !store.GrantFor(f.For).Valid() {
		return nil, invalidf("grant_for %q is not workspace, schedule or webhook", f.For)
	}
	list, _, err := s.st.StandingGrants(ctx, store.StandingGrantFilter{For: store.GrantFor(f.For), Name: f.Name, All: f.All})
	return list, mapStoreErr(err, "the standing grants")
}

// RevokeGrant ends standing grant id for p, which needs the grant or
// admin role; it stops allowing calls from the next decision on, on every
// node. Revoking a revoked grant returns it unchanged. Errors are
// ErrForbidden or ErrNotFound (*Error).
func (s *Service) RevokeGrant(ctx context.Context, p Principal, id string) (store.StandingGrant, error) {
	if !p.Role.AtLeast(store.RoleGrant) {
		return store.StandingGrant{}, failf(ErrForbidden, "%s may not revoke standing grants (role %s); the grant or admin role is needed", p.ID, p.Role)
	}
	g, err := s.st.RevokeStandingGrant(ctx, id, p.ID)
	if err != nil {
		return store.StandingGrant{}, mapStoreErr(err, "standing grant "+id)
	}
	return g, nil
}
