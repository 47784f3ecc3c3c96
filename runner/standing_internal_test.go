package runner

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestStandingCacheAcrossNodes: two nodes (two services, each with its own
// copy) share a store. A grant added on one is in the other's fresh copy
// at once, though its cached copy still lacks it; a grant revoked on one
// is still in the other's cached copy, but its use is refused, and the
// fresh copy drops it; an expired grant leaves the copy without any
// change of the epoch.
func TestStandingCacheAcrossNodes(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Now()
			clock := func() time.Time { return now }
			st := open(t, store.Config{Now: clock})
			a := &Service{st: st, now: clock, log: slog.Default()}
			b := &Service{st: st, now: clock, log: slog.Default()}
			targets := []grantTarget{{store.GrantForWorkspace, "app"}, {store.GrantForSchedule, "nightly"}}
			warm, err := b.standingGrants(ctx, targets, false)
			if err != nil || warm.Len() != 0 {
				t.Fatalf("b's first copy = %d, %v", warm.Len(), err)
			}
			g, err := st.AddStandingGrant(ctx, store.NewStandingGrant{Scope: "Bash(go test:*)", For: store.GrantForSchedule, Name: "nightly", GrantedBy: "token:root"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.AddStandingGrant(ctx, store.NewStandingGrant{Scope: "Bash(make:*)", For: store.GrantForWorkspace, Name: "other", GrantedBy: "token:root"}); err != nil {
				t.Fatal(err)
			}
			if cached, _ := b.standingGrants(ctx, targets, false); cached != warm {
				t.Error("the cached copy was re-read without being asked to")
			}
			fresh, err := b.standingGrants(ctx, targets, true)
			if err != nil || fresh.Len() != 1 {
				t.Fatalf("b's fresh copy = %d grants, %v; want the schedule's one (not the other workspace's)", fresh.Len(), err)
			}
			if again, _ := b.standingGrants(ctx, targets, true); again != fresh {
				t.Error("a fresh look with the epoch unchanged built a new copy")
			}
			if _, err := a.RevokeGrant(ctx, Principal{ID: "token:root", Role: store.RoleAdmin}, g.ID); err != nil {
				t.Fatal(err)
			}
			if cached, _ := b.standingGrants(ctx, targets, false); cached.Len() != 1 {
				t.Fatalf("b's cached copy = %d grants", cached.Len())
			}
			if ok, err := st.UseStandingGrant(ctx, g.ID); ok || err != nil {
				t.Fatalf("use of a revoked grant = %v, %v", ok, err)
			}
			if after, _ := b.standingGrants(ctx, targets, true); after.Len() != 0 {
				t.Fatalf("b's fresh copy after the revocation = %d grants", after.Len())
			}
			if _, err := st.AddStandingGrant(ctx, store.NewStandingGrant{Scope: "Edit(docs/**)", For: store.GrantForWorkspace, Name: "app",
				GrantedBy: "token:root", ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if got, _ := b.standingGrants(ctx, targets, true); got.Len() != 1 {
				t.Fatalf("copy with the expiring grant = %d", got.Len())
			}
			now = now.Add(2 * time.Hour)
			if got, _ := b.standingGrants(ctx, targets, false); got.Len() != 0 {
				t.Errorf("the cached copy still holds a grant that expired: %d", got.Len())
			}
		})
	}
}

// BenchmarkStandingLookup measures what a node's gate asks of the cache
// per decision: its copy of 1,000 grants (fresh false) — a map lookup
// under a lock — and, for comparison, the fresh look a call no grant
// covers makes before a person is asked (one epoch read).
func BenchmarkStandingLookup(b *testing.B) {
	ctx := context.Background()
	st := storetest.SQLite(b, store.Config{})
	s := &Service{st: st, now: time.Now, log: slog.Default()}
	for i := range 1000 {
		if _, err := st.AddStandingGrant(ctx, store.NewStandingGrant{Scope: fmt.Sprintf("Bash(make target%d:*)", i),
			For: store.GrantForWorkspace, Name: "app", GrantedBy: "token:root"}); err != nil {
			b.Fatal(err)
		}
	}
	targets := []grantTarget{{store.GrantForWorkspace, "app"}, {store.GrantForSchedule, "nightly"}}
	if set, err := s.standingGrants(ctx, targets, false); err != nil || set.Len() != 1000 {
		b.Fatalf("%d grants, %v", set.Len(), err)
	}
	for _, fresh := range []bool{false, true} {
		b.Run(fmt.Sprintf("fresh=%v", fresh), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.standingGrants(ctx, targets, fresh); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
