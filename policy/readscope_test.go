package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"reasonix/agent"
	"reasonix/policy"
)

// Under ask, a file tool reading outside the workspace (and allow_read)
// needs a person — directly, through "..", or through a symlink planted in
// the workspace; inside it, and under auto, reads need nobody.
func TestReadsOutsideTheWorkspaceNeedAPerson(t *testing.T) {
	ws, other, extra := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Symlink(other, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	read := func(tool, key, p string) agent.Call {
		args, _ := json.Marshal(map[string]string{key: p})
		return agent.Call{ID: "1", Tool: tool, ReadOnly: true, Args: args}
	}
	gate := func(posture policy.Posture, allow ...string) *policy.Gate {
		g, err := policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, policy.Config{Allow: allow}), Posture: posture,
			Workdir: ws, AllowRead: []string{extra}})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		call agent.Call
		ok   bool
	}{
		{read("read_file", "path", "main.go"), true},
		{read("read_file", "path", filepath.Join(ws, "sub", "x")), true},
		{read("read_file", "path", filepath.Join(extra, "notes.txt")), true},
		{read("read_file", "path", filepath.Join(other, "secret")), false},
		{read("read_file", "path", "../"+filepath.Base(other)+"/secret"), false},
		{read("read_file", "path", "link/secret"), false},
		{read("ls", "path", "/etc"), false},
		{read("grep", "path", "/etc"), false},
		{read("glob", "pattern", "/etc/*.conf"), false},
		{read("glob", "pattern", "**/*.go"), true},
		{read("read_file", "path", "~/.bashrc"), false},
	} {
		v, err := gate(policy.PostureAsk).Authorize(t.Context(), tc.call)
		if err != nil || v.Allowed != tc.ok {
			t.Errorf("ask %s %s: %+v, %v; want allowed=%v", tc.call.Tool, tc.call.Args, v, err, tc.ok)
		}
		if !tc.ok && v.Code != agent.RefusedUnattended {
			t.Errorf("ask %s %s: code %q", tc.call.Tool, tc.call.Args, v.Code)
		}
		if v, _ := gate(policy.PostureAuto).Authorize(t.Context(), tc.call); !v.Allowed {
			t.Errorf("auto %s %s: refused %+v", tc.call.Tool, tc.call.Args, v)
		}
	}
	// An explicit allow rule covers a read outside.
	if v, _ := gate(policy.PostureAsk, "Read("+other+"/**)").Authorize(t.Context(), read("read_file", "path", filepath.Join(other, "x"))); !v.Allowed {
		t.Errorf("an explicit Read rule did not allow: %+v", v)
	}
}
