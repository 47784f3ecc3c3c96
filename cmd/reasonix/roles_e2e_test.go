package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRolesOnTheBinary: chat identities get, show and lose roles; anything
// that is not a chat identity, or no role, is a usage error.
func TestRolesOnTheBinary(t *testing.T) {
	e := newE2E(t)
	if out, stderr, code := e.run("roles", "grant", "slack:T0123/U0456", "--role", "approve"); code != 0 || !strings.Contains(out, "granted approve to slack:T0123/U0456") {
		t.Fatalf("roles grant: %d %q %s", code, out, stderr)
	}
	if _, _, code := e.run("roles", "grant", "telegram:42", "--role", "submit"); code != 0 {
		t.Fatalf("roles grant telegram: %d", code)
	}
	for _, bad := range [][]string{
		{"roles", "grant", "token:ci", "--role", "approve"},
		{"roles", "grant", "alice", "--role", "approve"},
		{"roles", "grant", "telegram:42"},
		{"roles", "grant", "telegram:42", "--role", "root"},
	} {
		if _, stderr, code := e.run(bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", bad, code, exitUsage, stderr)
		}
	}
	list, _, code := e.run("roles", "list")
	if code != 0 || !strings.Contains(list, "slack:T0123/U0456") || !strings.Contains(list, "telegram:42") || !strings.Contains(list, "approve") {
		t.Errorf("roles list: %d\n%s", code, list)
	}
	out, _, code := e.run("roles", "list", "--json")
	var roles []struct{ Principal, Role string }
	if err := json.Unmarshal([]byte(out), &roles); code != 0 || err != nil || len(roles) != 2 {
		t.Errorf("roles list --json: %d %v\n%s", code, err, out)
	} else if byName := map[string]string{roles[0].Principal: roles[0].Role, roles[1].Principal: roles[1].Role}; byName["telegram:42"] != "submit" || byName["slack:T0123/U0456"] != "approve" {
		t.Errorf("roles list --json: %+v", roles)
	}
	if _, _, code := e.run("roles", "revoke", "telegram:42"); code != 0 {
		t.Errorf("roles revoke: %d", code)
	}
	if _, stderr, code := e.run("roles", "revoke", "telegram:42"); code != 1 || !strings.Contains(stderr, "has no role") {
		t.Errorf("a second revoke: %d %s", code, stderr)
	}
	if list, _, _ := e.run("roles", "list"); strings.Contains(list, "telegram:42") {
		t.Errorf("revoked role still listed:\n%s", list)
	}
}
