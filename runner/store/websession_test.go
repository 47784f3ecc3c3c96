package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// testWebSessions: a login code signs in once and only before it expires;
// a session lives until it expires, is ended, or its token is revoked.
func testWebSessions(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, store.Config{Now: clk.Now})
	tok, _, err := s.CreateToken(ctx, store.NewToken{Name: "erin", Role: store.RoleApprove})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateLoginCode(ctx, "nobody", time.Minute); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("code for an unknown token: err = %v, want ErrNotFound", err)
	}
	code, err := s.CreateLoginCode(ctx, "erin", time.Minute)
	if err != nil || !strings.HasPrefix(code, store.LoginCodePrefix) {
		t.Fatalf("CreateLoginCode = %q, %v", code, err)
	}
	got, err := s.ConsumeLoginCode(ctx, code)
	if err != nil || got.ID != tok.ID {
		t.Fatalf("first use = %+v, %v; want token %s", got, err, tok.ID)
	}
	if _, err := s.ConsumeLoginCode(ctx, code); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second use: err = %v, want ErrNotFound", err)
	}
	late, _ := s.CreateLoginCode(ctx, "erin", time.Minute)
	clk.Advance(time.Minute)
	if _, err := s.ConsumeLoginCode(ctx, late); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired code: err = %v, want ErrNotFound", err)
	}

	secret, ws, err := s.CreateWebSession(ctx, tok, time.Hour)
	if err != nil || len(ws.CSRF) != 64 || secret == ws.CSRF {
		t.Fatalf("CreateWebSession = %q, %+v, %v", secret, ws, err)
	}
	back, err := s.WebSessionBySecret(ctx, secret)
	if err != nil || back.Token.ID != tok.ID || back.CSRF != ws.CSRF || !back.ExpiresAt.Equal(ws.ExpiresAt) {
		t.Fatalf("WebSessionBySecret = %+v, %v; want %+v", back, err, ws)
	}
	if _, err := s.WebSessionBySecret(ctx, secret+"x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("wrong secret: err = %v", err)
	}
	clk.Advance(time.Hour)
	if _, err := s.WebSessionBySecret(ctx, secret); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired session: err = %v, want ErrNotFound", err)
	}

	ended, _, _ := s.CreateWebSession(ctx, tok, time.Hour)
	if err := s.DeleteWebSession(ctx, ended); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSessionBySecret(ctx, ended); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ended session: err = %v, want ErrNotFound", err)
	}

	revoked, _, _ := s.CreateWebSession(ctx, tok, time.Hour)
	pending, _ := s.CreateLoginCode(ctx, "erin", time.Hour)
	if _, err := s.RevokeToken(ctx, "erin"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSessionBySecret(ctx, revoked); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("session of a revoked token: err = %v, want ErrNotFound", err)
	}
	if _, err := s.ConsumeLoginCode(ctx, pending); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("code of a revoked token: err = %v, want ErrNotFound", err)
	}
	if _, err := s.CreateLoginCode(ctx, "erin", time.Minute); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("code for a revoked token: err = %v, want ErrNotFound", err)
	}
}

// testTaskSearch: the list filters by workspace and by a case-blind
// substring of the prompt, with LIKE's wildcards taken literally.
func testTaskSearch(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	for i, nt := range []store.NewTask{
		{Source: store.SourceAPI, Prompt: "Fix the FLAKY test", Workspace: "web"},
		{Source: store.SourceAPI, Prompt: "raise coverage to 100%", Workspace: "web"},
		{Source: store.SourceAPI, Prompt: "fix flaky_test in api", Workspace: "api"},
	} {
		if _, _, err := s.CreateTask(ctx, nt, "search-"+string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
	}
	prompts := func(f store.TaskFilter) []string {
		t.Helper()
		p, err := s.ListTasks(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, task := range p.Tasks {
			out = append(out, task.Prompt)
		}
		return out
	}
	if got := prompts(store.TaskFilter{Search: "flaky"}); len(got) != 2 {
		t.Errorf("search flaky = %q, want both flaky tasks", got)
	}
	if got := prompts(store.TaskFilter{Search: "flaky_"}); len(got) != 1 || got[0] != "fix flaky_test in api" {
		t.Errorf("search flaky_ = %q, want only the literal underscore", got)
	}
	if got := prompts(store.TaskFilter{Search: "100%"}); len(got) != 1 {
		t.Errorf("search 100%% = %q", got)
	}
	if got := prompts(store.TaskFilter{Workspace: "web", Search: "fix"}); len(got) != 1 || got[0] != "Fix the FLAKY test" {
		t.Errorf("workspace web + fix = %q", got)
	}
}
