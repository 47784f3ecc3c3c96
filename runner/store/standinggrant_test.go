package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestStandingGrants runs the standing grant behaviour on SQLite and
// Postgres: add (twice is once), list, use, expiry, revoke and the epoch
// that tells a node's copy it is stale.
func TestStandingGrants(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			t.Run("Lifecycle", func(t *testing.T) { testStandingLifecycle(t, open) })
			t.Run("AllowAlways", func(t *testing.T) { testAllowAlways(t, open) })
		})
	}
}

func testStandingLifecycle(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, store.Config{Now: clk.Now})
	e0, err := s.StandingGrantEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []store.NewStandingGrant{
		{Scope: "Bash(", For: store.GrantForWorkspace, Name: "repo", GrantedBy: "token:a"},
		{Scope: "Bash(go test:*)", For: "team", Name: "repo", GrantedBy: "token:a"},
		{Scope: "Bash(go test:*)", For: store.GrantForWorkspace, Name: " ", GrantedBy: "token:a"},
		{Scope: "Bash(go test:*)", For: store.GrantForWorkspace, Name: "repo"},
		{Scope: "Bash(go test:*)", For: store.GrantForWorkspace, Name: "repo", GrantedBy: "token:a", ExpiresAt: clk.Now().Add(-time.Hour)},
	} {
		if _, err := s.AddStandingGrant(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AddStandingGrant(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
	g, err := s.AddStandingGrant(ctx, store.NewStandingGrant{Scope: " Bash(go test:*) ", For: store.GrantForSchedule, Name: "nightly", GrantedBy: "token:admin"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Scope != "Bash(go test:*)" || g.For != store.GrantForSchedule || g.Name != "nightly" || g.GrantedBy != "token:admin" || !g.Live(clk.Now()) {
		t.Errorf("added %+v", g)
	}
	again, err := s.AddStandingGrant(ctx, store.NewStandingGrant{Scope: "Bash(go test:*)", For: store.GrantForSchedule, Name: "nightly", GrantedBy: "token:other"})
	if err != nil || again.ID != g.ID || again.GrantedBy != "token:admin" {
		t.Errorf("adding twice = %+v, %v; want the first grant", again, err)
	}
	e1, _ := s.StandingGrantEpoch(ctx)
	if e1 != e0+1 {
		t.Errorf("epoch after one add (and one repeat) = %d, want %d", e1, e0+1)
	}
	exp, err := s.AddStandingGrant(ctx, store.NewStandingGrant{Scope: "Edit(docs/**)", For: store.GrantForWorkspace, Name: "repo",
		GrantedBy: "token:admin", ExpiresAt: clk.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	list, epoch, err := s.StandingGrants(ctx, store.StandingGrantFilter{})
	if err != nil || len(list) != 2 || list[0].ID != g.ID || list[1].ID != exp.ID || epoch != e0+2 {
		t.Fatalf("StandingGrants = %+v, epoch %d, %v", list, epoch, err)
	}
	if only, _, _ := s.StandingGrants(ctx, store.StandingGrantFilter{For: store.GrantForWorkspace, Name: "repo"}); len(only) != 1 || only[0].ID != exp.ID {
		t.Errorf("filtered list = %+v", only)
	}
	if ok, err := s.UseStandingGrant(ctx, g.ID); !ok || err != nil {
		t.Errorf("UseStandingGrant = %v, %v", ok, err)
	}
	if got, _ := s.StandingGrant(ctx, g.ID); got.Uses != 1 || got.LastUsedAt.IsZero() {
		t.Errorf("after a use: %+v", got)
	}
	clk.Advance(2 * time.Hour)
	if ok, _ := s.UseStandingGrant(ctx, exp.ID); ok {
		t.Error("an expired grant was used")
	}
	// Granting an expired scope again makes a new grant.
	renewed, err := s.AddStandingGrant(ctx, store.NewStandingGrant{Scope: "Edit(docs/**)", For: store.GrantForWorkspace, Name: "repo", GrantedBy: "token:admin"})
	if err != nil || renewed.ID == exp.ID || !renewed.Live(clk.Now()) {
		t.Errorf("renewed = %+v, %v", renewed, err)
	}
	rev, err := s.RevokeStandingGrant(ctx, g.ID, "token:boss")
	if err != nil || rev.RevokedAt.IsZero() || rev.RevokedBy != "token:boss" || rev.Live(clk.Now()) {
		t.Fatalf("RevokeStandingGrant = %+v, %v", rev, err)
	}
	e2, _ := s.StandingGrantEpoch(ctx)
	if twice, err := s.RevokeStandingGrant(ctx, g.ID, "token:late"); err != nil || twice.RevokedBy != "token:boss" {
		t.Errorf("revoking twice = %+v, %v", twice, err)
	}
	if e3, _ := s.StandingGrantEpoch(ctx); e3 != e2 || e2 <= e1 {
		t.Errorf("epochs %d %d %d: a revocation moves it, a repeated one does not", e1, e2, e3)
	}
	if ok, _ := s.UseStandingGrant(ctx, g.ID); ok {
		t.Error("a revoked grant was used")
	}
	if _, err := s.RevokeStandingGrant(ctx, "sg_missing", "token:boss"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking an unknown grant = %v", err)
	}
	live, _, _ := s.StandingGrants(ctx, store.StandingGrantFilter{})
	all, _, _ := s.StandingGrants(ctx, store.StandingGrantFilter{All: true})
	if len(live) != 1 || live[0].ID != renewed.ID || len(all) != 3 {
		t.Errorf("live %+v, all %d", live, len(all))
	}
}

func testAllowAlways(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("always"), "")
	na := newApproval(task.ID, time.Now().Add(time.Hour))
	na.Scopes = []string{"Bash=rm -rf build", "Bash(rm:*)"}
	ap, err := s.CreateApproval(ctx, na)
	if err != nil {
		t.Fatal(err)
	}
	target := &store.NewStandingGrant{For: store.GrantForWorkspace, Name: "repo"}
	if _, err := s.Decide(ctx, ap.ID, store.DecideOpts{Decision: store.AllowAlways, Approver: "slack:U2", CallHash: "h1"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("allow_always without a grant = %v", err)
	}
	bad := *target
	bad.Scope = "Bash(curl:*)"
	if _, err := s.Decide(ctx, ap.ID, store.DecideOpts{Decision: store.AllowAlways, Approver: "slack:U2", Grant: &bad}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("allow_always with a scope not offered = %v", err)
	}
	if list, _, _ := s.StandingGrants(ctx, store.StandingGrantFilter{All: true}); len(list) != 0 {
		t.Fatalf("refused decisions left grants: %+v", list)
	}
	got, err := s.Decide(ctx, ap.ID, store.DecideOpts{Decision: store.AllowAlways, Approver: "slack:U2", CallHash: "h1", Grant: target})
	if err != nil || got.State != store.ApprovalAllowed || got.Decision != store.AllowAlways || got.Scope != "Bash=rm -rf build" {
		t.Fatalf("Decide = %+v, %v", got, err)
	}
	list, _, _ := s.StandingGrants(ctx, store.StandingGrantFilter{})
	if len(list) != 1 || list[0].Scope != "Bash=rm -rf build" || list[0].GrantedBy != "slack:U2" || list[0].ApprovalID != ap.ID || list[0].TaskID != task.ID {
		t.Errorf("grants after allow_always = %+v", list)
	}
	audit, _ := s.ApprovalAudit(ctx, ap.ID)
	if len(audit) != 2 || audit[1].Action != "allow_always" {
		t.Errorf("audit = %+v", audit)
	}
}
