package store_test

import (
	"context"
	"errors"
	"testing"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

func testRoles(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	if _, err := s.RoleOf(ctx, "slack:T1/U2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("role before a grant: %v", err)
	}
	if _, err := s.GrantRole(ctx, "slack:T1/U2", store.RoleSubmit); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GrantRole(ctx, "slack:T1/U2", store.RoleApprove); err != nil { // replaces
		t.Fatal(err)
	}
	if _, err := s.GrantRole(ctx, "telegram:42", store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if r, err := s.RoleOf(ctx, "slack:T1/U2"); err != nil || r != store.RoleApprove {
		t.Errorf("role = %q, %v", r, err)
	}
	list, err := s.PrincipalRoles(ctx)
	if err != nil || len(list) != 2 || list[0].Principal != "slack:T1/U2" || list[1].Role != store.RoleAdmin {
		t.Errorf("roles = %+v, %v", list, err)
	}
	for _, bad := range []string{"token:erin", "slack:U2", "slack:T1/u2", "telegram:abc", "alice", "slack:T1/U2 ", ""} {
		if _, err := s.GrantRole(ctx, bad, store.RoleApprove); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("granting %q: %v", bad, err)
		}
	}
	if _, err := s.GrantRole(ctx, "telegram:7", "root"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("unknown role: %v", err)
	}
	if err := s.RevokeRole(ctx, "slack:T1/U2"); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeRole(ctx, "slack:T1/U2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
	if _, err := s.RoleOf(ctx, "slack:T1/U2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("role after revoke: %v", err)
	}
}

func TestRoleAtLeastIsTheRankOrder(t *testing.T) {
	roles := []store.Role{store.RoleSubmit, store.RoleApprove, store.RoleAdmin}
	for i, r := range roles {
		for j, min := range roles {
			if got := r.AtLeast(min); got != (i >= j) {
				t.Errorf("%s.AtLeast(%s) = %v", r, min, got)
			}
		}
		if store.Role("root").AtLeast(r) || store.Role("").AtLeast(r) {
			t.Errorf("an unknown role has %s's rights", r)
		}
	}
}
