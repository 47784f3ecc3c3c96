package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestGrantsListAndRevoke drives `reasonix grants list|revoke` against a
// real service API: the table and --json list the standing grant, revoke
// ends it (by the token's principal), an unknown id is named.
func TestGrantsListAndRevoke(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, runnertest.Options{Provider: agenttest.NewScriptedProvider(), Store: st})
	const secret = "rxt_grants_cli_test_secret_0123456789abcdef0123456789abcdef01234567"
	if _, err := st.RegisterBootstrapToken(ctx, store.BootstrapName, secret); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REASONIX_HOME", home)
	t.Setenv("REASONIX_API_TOKEN", secret)
	t.Setenv("NO_COLOR", "")

	if out, stderr, code := cliRun("grants", "list", "--server", srv.URL); code != exitOK || !strings.HasPrefix(out, "no standing grants") {
		t.Fatalf("empty list: exit %d, %q %q", code, out, stderr)
	}
	g, err := st.AddStandingGrant(ctx, store.NewStandingGrant{Scope: "Edit(docs/**)", For: store.GrantForWorkspace, Name: "app", GrantedBy: "token:root"})
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := cliRun("grants", "list", "--server", srv.URL)
	if code != exitOK || !strings.Contains(out, g.ID) || !strings.Contains(out, "Edit(docs/**)") || !strings.Contains(out, "workspace app") ||
		!strings.Contains(out, "token:root") || !strings.Contains(out, "active") {
		t.Fatalf("list: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := cliRun("grants", "revoke", "sg_nope", "--server", srv.URL); code != exitFailed || stderr != "reasonix: standing grant sg_nope not found\n" {
		t.Errorf("revoke of an unknown id: exit %d, %q", code, stderr)
	}
	if out, stderr, code := cliRun("grants", "revoke", g.ID, "--server", srv.URL); code != exitOK || !strings.Contains(out, "revoked by token:admin") {
		t.Fatalf("revoke: exit %d, %q %q", code, out, stderr)
	}
	out, _, code = cliRun("grants", "list", "--all", "--json", "--server", srv.URL)
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != exitOK || len(list) != 1 || list[0]["revoked_by"] != "token:admin" || list[0]["scope"] != "Edit(docs/**)" {
		t.Fatalf("list --all --json: exit %d, %v\n%s", code, err, out)
	}
}
