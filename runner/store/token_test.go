package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"reasonix/policy"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// testTokens: a secret is shown once and stored only as its hash; it
// authenticates its principal until revoked; names are unique and checked.
func testTokens(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, store.Config{Now: clk.Now})
	tok, secret, err := s.CreateToken(ctx, store.NewToken{Name: "alice", Role: store.RoleSubmit})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, store.SecretPrefix) || len(secret) < len(store.SecretPrefix)+64 {
		t.Errorf("secret %q: want %s and 32 random bytes in hex", secret, store.SecretPrefix)
	}
	if tok.Principal() != "token:alice" || tok.Role != store.RoleSubmit || tok.MaxPosture != policy.PostureAuto || !strings.HasPrefix(tok.ID, "tok_") {
		t.Errorf("created token = %+v", tok)
	}
	row, err := s.TokenRowForTest(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row, secret) || strings.Contains(row, strings.TrimPrefix(secret, store.SecretPrefix)) {
		t.Fatalf("the stored row holds the secret: %s", row)
	}

	got, err := s.Authenticate(ctx, secret)
	if err != nil || got.ID != tok.ID || got.LastUsedAt.IsZero() {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	for _, bad := range []string{"", secret + "x", strings.ToUpper(secret), "rxt_"} {
		if _, err := s.Authenticate(ctx, bad); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Authenticate(%q) = %v; want ErrNotFound", bad, err)
		}
	}

	if _, _, err := s.CreateToken(ctx, store.NewToken{Name: "alice", Role: store.RoleAdmin}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a second alice: %v; want ErrInvalid", err)
	}
	for _, nt := range []store.NewToken{
		{Name: "Alice", Role: store.RoleSubmit},
		{Name: "", Role: store.RoleSubmit},
		{Name: "a b", Role: store.RoleSubmit},
		{Name: store.BootstrapName, Role: store.RoleAdmin},
		{Name: "admin@node-1", Role: store.RoleAdmin},
		{Name: "bob", Role: "root"},
		{Name: "bob", Role: store.RoleSubmit, MaxPosture: "reckless"},
	} {
		if _, _, err := s.CreateToken(ctx, nt); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateToken(%+v) = %v; want ErrInvalid", nt, err)
		}
	}
	ci, _, err := s.CreateToken(ctx, store.NewToken{Name: "ci-bot", Role: store.RoleApprove, MaxPosture: policy.PostureAsk})
	if err != nil || ci.MaxPosture != policy.PostureAsk {
		t.Fatalf("ci-bot = %+v, %v", ci, err)
	}

	clk.Advance(time.Hour)
	rev, err := s.RevokeToken(ctx, "alice")
	if err != nil || !rev.Revoked() {
		t.Fatalf("RevokeToken = %+v, %v", rev, err)
	}
	if _, err := s.Authenticate(ctx, secret); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a revoked token authenticated: %v", err)
	}
	again, err := s.RevokeToken(ctx, tok.ID) // by id, and a second time
	if err != nil || !again.RevokedAt.Equal(rev.RevokedAt) {
		t.Errorf("revoking twice = %+v, %v; want the first revocation kept", again, err)
	}
	if _, err := s.RevokeToken(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoke unknown = %v", err)
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alice" || !list[0].Revoked() || list[1].Name != "ci-bot" || list[1].Revoked() {
		t.Fatalf("Tokens = %+v, %v", list, err)
	}
	// The name stays taken after revocation: decisions and tasks recorded
	// token:alice, and a new alice would inherit them.
	if _, _, err := s.CreateToken(ctx, store.NewToken{Name: "alice", Role: store.RoleSubmit}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("alice after revocation: %v; want ErrInvalid", err)
	}
}

// testBootstrapToken: the service's own token becomes an admin principal;
// registering it again is a no-op, a new secret rotates it, and a revoked
// one stays revoked.
func testBootstrapToken(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	first := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" // an old installation's file
	tok, err := s.RegisterBootstrapToken(ctx, store.BootstrapName, first)
	if err != nil || tok.Role != store.RoleAdmin || tok.MaxPosture != policy.PostureYolo || tok.Principal() != "token:admin" {
		t.Fatalf("RegisterBootstrapToken = %+v, %v", tok, err)
	}
	if got, err := s.Authenticate(ctx, first); err != nil || got.ID != tok.ID {
		t.Fatalf("the first token does not authenticate as admin: %+v, %v", got, err)
	}
	if again, err := s.RegisterBootstrapToken(ctx, store.BootstrapName, first); err != nil || again.ID != tok.ID {
		t.Errorf("registering again = %+v, %v", again, err)
	}
	// Another node sharing the store registers its own file under its name;
	// the same secret (one variable on every node) maps to the first row.
	other, err := s.RegisterBootstrapToken(ctx, "admin@node-b", "second-secret")
	if err != nil || other.Name != "admin@node-b" || other.ID == tok.ID {
		t.Errorf("second node = %+v, %v", other, err)
	}
	if same, err := s.RegisterBootstrapToken(ctx, "admin@node-c", first); err != nil || same.ID != tok.ID {
		t.Errorf("a shared secret = %+v, %v; want the existing admin", same, err)
	}
	// Rotation: a new file replaces the old secret.
	rotated, err := s.RegisterBootstrapToken(ctx, store.BootstrapName, "rotated-secret")
	if err != nil || rotated.ID != tok.ID {
		t.Fatalf("rotate = %+v, %v", rotated, err)
	}
	if _, err := s.Authenticate(ctx, first); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the replaced secret still authenticates: %v", err)
	}
	if _, err := s.RevokeToken(ctx, store.BootstrapName); err != nil {
		t.Fatal(err)
	}
	if kept, err := s.RegisterBootstrapToken(ctx, store.BootstrapName, "rotated-secret"); err != nil || !kept.Revoked() {
		t.Errorf("a restart revived the revoked admin token: %+v, %v", kept, err)
	}
	if _, err := s.Authenticate(ctx, "rotated-secret"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the revoked admin token authenticates: %v", err)
	}
	if _, err := s.RegisterBootstrapToken(ctx, "alice", "x"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a bootstrap token named alice: %v", err)
	}
}
