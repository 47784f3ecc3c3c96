package forge_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"reasonix/runner/forge"
	"reasonix/runner/forge/forgetest"
)

// The conformance suite: every test here runs against both forges, through
// the real client and a fake server speaking that forge's wire format.

var kinds = []forge.Kind{forge.GitHub, forge.GitLab}

type harness struct {
	kind forge.Kind
	srv  *forgetest.Server
	f    forge.Forge
}

// forEach runs fn once per forge kind, each with a fresh server.
func forEach(t *testing.T, opts forgetest.Options, fn func(t *testing.T, h harness)) {
	t.Helper()
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			srv := forgetest.New(t, kind, opts)
			fn(t, harness{kind: kind, srv: srv, f: open(t, srv.Config())})
		})
	}
}

func open(t *testing.T, cfg forge.Config) forge.Forge {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cfg.HTTPClient = &http.Client{Transport: tr}
	f, err := forge.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f
}

func TestVerifyNamesUserAndProject(t *testing.T) {
	forEach(t, forgetest.Options{Project: "acme/app", User: "bot"}, func(t *testing.T, h harness) {
		id, err := h.f.Verify(t.Context())
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		want := forge.Identity{User: "bot", Project: "acme/app", DefaultBranch: "main", CanPush: true}
		if id != want {
			t.Errorf("Verify = %+v, want %+v", id, want)
		}
	})
}

// A GitHub App's installation token cannot read /user but is valid.
func TestVerifyGitHubAppToken(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Options{App: true})
	id, err := open(t, srv.Config()).Verify(t.Context())
	want := forge.Identity{Project: "acme/app", DefaultBranch: "main", CanPush: true}
	if err != nil || id != want {
		t.Fatalf("Verify with an app token = %+v, %v; want %+v", id, err, want)
	}
}

func TestVerifyNestedGitLabProject(t *testing.T) {
	srv := forgetest.NewGitLab(t, forgetest.Options{Project: "group/sub group/app"})
	id, err := open(t, srv.Config()).Verify(t.Context())
	if err != nil || id.Project != "group/sub group/app" {
		t.Fatalf("Verify = %+v, %v", id, err)
	}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.URL, "/api/v4/projects/") && !strings.HasPrefix(r.URL, "/api/v4/projects/group%2Fsub%20group%2Fapp") {
			t.Errorf("project path not URL-encoded: %s", r.URL)
		}
	}
}

func TestVerifyBadTokenIsUnauthorized(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		cfg := h.srv.Config()
		cfg.Token = "wrong-token-abcdefgh"
		_, err := open(t, cfg).Verify(t.Context())
		var ae *forge.APIError
		if !errors.Is(err, forge.ErrUnauthorized) || !errors.As(err, &ae) || ae.Status != 401 {
			t.Fatalf("Verify with a bad token: %v, want ErrUnauthorized (401)", err)
		}
		if strings.Contains(err.Error(), cfg.Token) {
			t.Errorf("error holds the token: %v", err)
		}
	})
}

func TestVerifyUnknownProjectIsNotFound(t *testing.T) {
	forEach(t, forgetest.Options{Project: "acme/app"}, func(t *testing.T, h harness) {
		cfg := h.srv.Config()
		cfg.Project = "acme/elsewhere"
		id, err := open(t, cfg).Verify(t.Context())
		if !errors.Is(err, forge.ErrNotFound) {
			t.Fatalf("Verify of another project: %v, want ErrNotFound", err)
		}
		if id.User == "" {
			t.Errorf("the token's user is lost when the project is missing: %+v", id)
		}
		if !strings.Contains(err.Error(), "acme/elsewhere") {
			t.Errorf("error does not name the project: %v", err)
		}
	})
}

func TestVerifyReadOnlyTokenIsNoPush(t *testing.T) {
	forEach(t, forgetest.Options{User: "bot"}, func(t *testing.T, h harness) {
		h.srv.SetPermission("bot", forge.PermRead)
		id, err := h.f.Verify(t.Context())
		if !errors.Is(err, forge.ErrNoPush) || id.CanPush {
			t.Fatalf("Verify with read access = %+v, %v; want ErrNoPush", id, err)
		}
	})
}

func TestOpenPRRecordsEverything(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		in := forge.PR{Title: "Fix the build", Body: "Summary\n\nFixes #3", Head: "reasonix/t1", Base: "main",
			Draft: true, Labels: []string{"reasonix", "bot"}}
		pr, err := h.f.OpenPR(t.Context(), in)
		if err != nil {
			t.Fatalf("OpenPR: %v", err)
		}
		if pr.Number != 1 || pr.State != forge.PROpen || !pr.Draft || pr.URL == "" || pr.Head != in.Head || pr.Base != "main" {
			t.Errorf("OpenPR = %+v", pr)
		}
		got := h.srv.PRs()
		if len(got) != 1 {
			t.Fatalf("server holds %d PRs, want 1", len(got))
		}
		g := got[0]
		wantTitle := in.Title
		if h.kind == forge.GitLab {
			wantTitle = "Draft: " + in.Title
		}
		if g.Title != wantTitle || g.Body != in.Body || g.Head != in.Head || g.Base != in.Base || !g.Draft ||
			!slices.Equal(g.Labels, in.Labels) {
			t.Errorf("server saw %+v, want %+v", g, in)
		}
	})
}

func TestOpenPRTwiceIsErrExists(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		in := forge.PR{Title: "t", Head: "reasonix/t1", Base: "main"}
		if _, err := h.f.OpenPR(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		_, err := h.f.OpenPR(t.Context(), in)
		if !errors.Is(err, forge.ErrExists) {
			t.Fatalf("second OpenPR: %v, want ErrExists", err)
		}
		if n := len(h.srv.PRs()); n != 1 {
			t.Errorf("%d PRs, want 1", n)
		}
	})
}

func TestOpenPRWithoutPushIsForbidden(t *testing.T) {
	forEach(t, forgetest.Options{User: "bot"}, func(t *testing.T, h harness) {
		h.srv.SetPermission("bot", forge.PermRead)
		_, err := h.f.OpenPR(t.Context(), forge.PR{Title: "t", Head: "h", Base: "main"})
		if !errors.Is(err, forge.ErrForbidden) {
			t.Fatalf("OpenPR with read access: %v, want ErrForbidden", err)
		}
	})
}

func TestFindPRByHead(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		if _, found, err := h.f.FindPR(t.Context(), "reasonix/t1"); err != nil || found {
			t.Fatalf("FindPR before any PR: found=%v err=%v", found, err)
		}
		h.srv.AddPR(forgetest.PullRequest{Title: "other", Head: "feature", Base: "main"})
		opened, err := h.f.OpenPR(t.Context(), forge.PR{Title: "t", Head: "reasonix/t1", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		pr, found, err := h.f.FindPR(t.Context(), "reasonix/t1")
		if err != nil || !found {
			t.Fatalf("FindPR: found=%v err=%v", found, err)
		}
		if pr.Number != opened.Number || pr.URL != opened.URL || pr.State != forge.PROpen || pr.Head != "reasonix/t1" {
			t.Errorf("FindPR = %+v, want %+v", pr, opened)
		}
	})
}

func TestFindPRPrefersOpenThenNewest(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		h.srv.AddPR(forgetest.PullRequest{Title: "a", Head: "b", Base: "main", State: forge.PRClosed})
		merged := h.srv.AddPR(forgetest.PullRequest{Title: "b", Head: "b", Base: "main", State: forge.PRMerged})
		pr, found, err := h.f.FindPR(t.Context(), "b")
		if err != nil || !found || pr.Number != merged || pr.State != forge.PRMerged {
			t.Fatalf("FindPR among closed ones = %+v, %v, %v; want #%d merged", pr, found, err, merged)
		}
		open := h.srv.AddPR(forgetest.PullRequest{Title: "c", Head: "b", Base: "main"})
		h.srv.AddPR(forgetest.PullRequest{Title: "d", Head: "b", Base: "main", State: forge.PRClosed})
		pr, _, err = h.f.FindPR(t.Context(), "b")
		if err != nil || pr.Number != open || pr.State != forge.PROpen {
			t.Fatalf("FindPR = %+v, %v; want the open #%d", pr, err, open)
		}
	})
}

func TestFindPRFollowsPages(t *testing.T) {
	forEach(t, forgetest.Options{PageSize: 2}, func(t *testing.T, h harness) {
		want := h.srv.AddPR(forgetest.PullRequest{Title: "open", Head: "b", Base: "main"})
		for range 5 {
			h.srv.AddPR(forgetest.PullRequest{Title: "old", Head: "b", Base: "main", State: forge.PRClosed})
		}
		pr, found, err := h.f.FindPR(t.Context(), "b")
		if err != nil || !found || pr.Number != want {
			t.Fatalf("FindPR = %+v, %v, %v; want #%d from the last page", pr, found, err, want)
		}
		if n := len(h.srv.Requests()); n < 3 {
			t.Errorf("%d requests, want the three pages followed", n)
		}
	})
}

func TestChecksCombine(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		ci, err := h.f.Checks(t.Context(), sha)
		if err != nil || ci.State != forge.CINone || len(ci.Checks) != 0 {
			t.Fatalf("Checks without CI = %+v, %v; want none", ci, err)
		}
		for _, tc := range []struct {
			name   string
			checks []forgetest.Check
			want   forge.CIState
		}{
			{"all pass", []forgetest.Check{{Name: "build", State: forge.CISuccess}, {Name: "lint", State: forge.CISuccess, Status: true}}, forge.CISuccess},
			{"one runs", []forgetest.Check{{Name: "build", State: forge.CIFailure}, {Name: "lint", State: forge.CIPending, Status: true}}, forge.CIPending},
			{"one fails", []forgetest.Check{{Name: "build", State: forge.CISuccess}, {Name: "test", State: forge.CIFailure, Summary: "2 tests failed"}}, forge.CIFailure},
			{"a status fails", []forgetest.Check{{Name: "build", State: forge.CISuccess}, {Name: "ci/legacy", State: forge.CIFailure, Status: true}}, forge.CIFailure},
			{"allowed to fail", []forgetest.Check{{Name: "build", State: forge.CISuccess}, {Name: "flaky", State: forge.CIFailure, AllowFailure: true}}, forge.CISuccess},
		} {
			if tc.name == "allowed to fail" && h.kind != forge.GitLab {
				continue
			}
			h.srv.SetChecks(sha, tc.checks...)
			ci, err := h.f.Checks(t.Context(), sha)
			if err != nil {
				t.Fatalf("%s: Checks: %v", tc.name, err)
			}
			if ci.State != tc.want || len(ci.Checks) != len(tc.checks) {
				t.Errorf("%s: Checks = %+v, want %s with %d checks", tc.name, ci, tc.want, len(tc.checks))
				continue
			}
			for _, c := range ci.Checks {
				if c.ID == "" || c.URL == "" || !strings.Contains(c.Name, checkName(tc.checks, c.Name)) {
					t.Errorf("%s: check %+v lacks an id, a URL or its name", tc.name, c)
				}
				if c.Name == "test" || strings.HasSuffix(c.Name, "/test") {
					if c.State != forge.CIFailure || c.Summary == "" {
						t.Errorf("%s: failing check %+v has no failure state or summary", tc.name, c)
					}
				}
			}
		}
	})
}

// checkName finds the fake check a reported name stands for (GitLab puts
// the stage in front).
func checkName(checks []forgetest.Check, got string) string {
	for _, c := range checks {
		if strings.HasSuffix(got, c.Name) {
			return c.Name
		}
	}
	return "\x00no such check"
}

// A GitLab commit with a branch and a merge request pipeline reports the
// jobs of both, each named with its pipeline.
func TestGitLabChecksOfTwoPipelines(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	srv := forgetest.NewGitLab(t, forgetest.Options{})
	f := open(t, srv.Config())
	srv.SetChecks(sha,
		forgetest.Check{Name: "unit", Stage: "test", State: forge.CISuccess},
		forgetest.Check{Name: "unit", Stage: "test", State: forge.CIFailure, Ref: "refs/merge-requests/1/head"})
	ci, err := f.Checks(t.Context(), sha)
	if err != nil || ci.State != forge.CIFailure || len(ci.Checks) != 2 {
		t.Fatalf("Checks = %+v, %v; want two checks, failure", ci, err)
	}
	names := []string{ci.Checks[0].Name, ci.Checks[1].Name}
	slices.Sort(names)
	if want := []string{"merge_request_event: test/unit", "push: test/unit"}; !slices.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
}

func TestChecksFollowPages(t *testing.T) {
	const sha = "89abcdef0123456789abcdef0123456789abcdef"
	forEach(t, forgetest.Options{PageSize: 2}, func(t *testing.T, h harness) {
		var checks []forgetest.Check
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			checks = append(checks, forgetest.Check{Name: n, State: forge.CISuccess})
		}
		checks[4].State = forge.CIFailure
		h.srv.SetChecks(sha, checks...)
		ci, err := h.f.Checks(t.Context(), sha)
		if err != nil || len(ci.Checks) != 5 || ci.State != forge.CIFailure || ci.Passing() != 4 || len(ci.Failing()) != 1 {
			t.Fatalf("Checks over pages = %+v, %v; want 5 checks, the last failing", ci, err)
		}
	})
}

func TestLogsKeepTheEnd(t *testing.T) {
	const sha = "fedcba9876543210fedcba9876543210fedcba98"
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		log := strings.Repeat("setup line\n", 2000) + "--- FAIL: TestX (0.01s)\n    x_test.go:12: got 1, want 2\nFAIL"
		h.srv.SetChecks(sha, forgetest.Check{Name: "test", State: forge.CIFailure, Summary: "failed", Log: log})
		ci, err := h.f.Checks(t.Context(), sha)
		if err != nil || len(ci.Checks) != 1 {
			t.Fatalf("Checks: %+v, %v", ci, err)
		}
		got, err := h.f.Logs(t.Context(), ci.Checks[0], 100)
		if err != nil {
			t.Fatalf("Logs: %v", err)
		}
		if len(got) > 100 || !strings.HasSuffix(got, "want 2\nFAIL") {
			t.Errorf("Logs = %q (%d bytes), want the last 100 bytes", got, len(got))
		}
		full, err := h.f.Logs(t.Context(), ci.Checks[0], 0)
		if err != nil || len(full) != forge.DefaultLogBytes {
			t.Errorf("Logs without a bound: %d bytes, %v; want %d", len(full), err, forge.DefaultLogBytes)
		}
	})
}

func TestLogsOfACommitStatusAreNone(t *testing.T) {
	const sha = "fedcba9876543210fedcba9876543210fedcba98"
	srv := forgetest.NewGitHub(t, forgetest.Options{})
	f := open(t, srv.Config())
	srv.SetChecks(sha, forgetest.Check{Name: "ci/legacy", State: forge.CIFailure, Status: true})
	ci, err := f.Checks(t.Context(), sha)
	if err != nil || len(ci.Checks) != 1 {
		t.Fatalf("Checks: %+v, %v", ci, err)
	}
	if _, err := f.Logs(t.Context(), ci.Checks[0], 100); !errors.Is(err, forge.ErrNoLogs) {
		t.Errorf("Logs of a commit status: %v, want ErrNoLogs", err)
	}
}

func TestCommentOnPRAndIssue(t *testing.T) {
	forEach(t, forgetest.Options{User: "bot", PageSize: 2}, func(t *testing.T, h harness) {
		n := h.srv.AddPR(forgetest.PullRequest{Title: "t", Head: "h", Base: "main"})
		if err := h.f.Comment(t.Context(), forge.PullRequestItem(n), "CI passes now"); err != nil {
			t.Fatalf("Comment on PR: %v", err)
		}
		if err := h.f.Comment(t.Context(), forge.IssueItem(7), "Opened #1"); err != nil {
			t.Fatalf("Comment on issue: %v", err)
		}
		want := []forgetest.Comment{
			{On: forge.Item{Number: n}, Body: "CI passes now", Author: "bot"},
			{On: forge.Item{Number: 7, Issue: true}, Body: "Opened #1", Author: "bot"},
		}
		if got := h.srv.Comments(); !slices.Equal(got, want) {
			t.Errorf("comments = %+v, want %+v", got, want)
		}
		// Found on its own item only, by any part of its text, across pages.
		for i := range 5 {
			if err := h.f.Comment(t.Context(), forge.IssueItem(7), fmt.Sprintf("filler %d", i)); err != nil {
				t.Fatal(err)
			}
		}
		// A stranger's copy of a marker does not count as the bot's.
		h.srv.AddComment(forgetest.Comment{On: forge.IssueItem(8), Body: "pasted #1 here", Author: "mallory"})
		for _, c := range []struct {
			on     forge.Item
			marker string
			author string
			want   bool
		}{
			{forge.IssueItem(7), "#1", "bot", true},
			{forge.IssueItem(7), "#1", "BOT", true},
			{forge.IssueItem(7), "filler 4", "bot", true},
			{forge.IssueItem(7), "CI passes", "bot", false},
			{forge.PullRequestItem(n), "CI passes", "bot", true},
			{forge.IssueItem(8), "#1", "bot", false},
			{forge.IssueItem(8), "#1", "mallory", true},
			{forge.IssueItem(7), "#1", "mallory", false},
		} {
			if got, err := h.f.FindComment(t.Context(), c.on, c.marker, c.author); err != nil || got != c.want {
				t.Errorf("FindComment(%+v, %q, %q) = %v, %v; want %v", c.on, c.marker, c.author, got, err, c.want)
			}
		}
	})
}

func TestPermission(t *testing.T) {
	forEach(t, forgetest.Options{User: "bot"}, func(t *testing.T, h harness) {
		h.srv.SetPermission("alice", forge.PermAdmin)
		h.srv.SetPermission("bob", forge.PermWrite)
		h.srv.SetPermission("carol", forge.PermRead)
		h.srv.AddUser("dave")
		for user, want := range map[string]forge.Permission{
			"alice": forge.PermAdmin, "bob": forge.PermWrite, "carol": forge.PermRead,
			"dave": forge.PermNone, "stranger": forge.PermNone, "bot": forge.PermWrite,
		} {
			got, err := h.f.Permission(t.Context(), user)
			if err != nil || got != want {
				t.Errorf("Permission(%s) = %s, %v; want %s", user, got, err, want)
			}
		}
	})
}

func TestTokenNeverInAnErrorOrURL(t *testing.T) {
	const token = "s3cret-forge-token-XYZ"
	forEach(t, forgetest.Options{Token: token}, func(t *testing.T, h harness) {
		ctx := t.Context()
		calls := map[string]func() error{
			"Verify":      func() error { _, err := h.f.Verify(ctx); return err },
			"FindPR":      func() error { _, _, err := h.f.FindPR(ctx, "b"); return err },
			"OpenPR":      func() error { _, err := h.f.OpenPR(ctx, forge.PR{Title: "t", Head: "h", Base: "main"}); return err },
			"Checks":      func() error { _, err := h.f.Checks(ctx, "abc"); return err },
			"Comment":     func() error { return h.f.Comment(ctx, forge.IssueItem(1), "x") },
			"FindComment": func() error { _, err := h.f.FindComment(ctx, forge.IssueItem(1), "x", "bot"); return err },
			"Permission":  func() error { _, err := h.f.Permission(ctx, "alice"); return err },
		}
		for name, call := range calls {
			// The forge echoes the token back, as a misbehaving proxy might.
			h.srv.FailNext(http.StatusInternalServerError, "upstream said: token "+token+" is odd")
			err := call()
			var ae *forge.APIError
			if !errors.As(err, &ae) || ae.Status != 500 {
				t.Errorf("%s: %v, want an APIError of status 500", name, err)
				continue
			}
			if strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "[redacted]") {
				t.Errorf("%s: error %q shows the token or lost the message", name, err)
			}
		}
		for _, r := range h.srv.Requests() {
			if strings.Contains(r.URL, token) {
				t.Errorf("the token is in a URL: %s", r.URL)
			}
			if !r.Authorized {
				t.Errorf("request %s carried no token", r.URL)
			}
		}
	})
}

func TestRateLimit(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		h.srv.FailNext(http.StatusTooManyRequests, "slow down")
		if _, err := h.f.Verify(t.Context()); !errors.Is(err, forge.ErrRateLimited) {
			t.Errorf("Verify on 429: %v, want ErrRateLimited", err)
		}
	})
}

func TestCancelledContextEndsTheCall(t *testing.T) {
	forEach(t, forgetest.Options{}, func(t *testing.T, h harness) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := h.f.Verify(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Verify with a cancelled ctx: %v, want context.Canceled", err)
		}
	})
}
