package acp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/policy"
	"reasonix/runner/session"
)

// Each session is built from its own cwd's configuration.
func TestSessionsUseTheirCwdsConfiguration(t *testing.T) {
	strict, plain, broken := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(id string) agenttest.Turn {
		return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: id, Name: "write_file", Arguments: `{"path":"x.txt","content":"x"}`}}}
	}
	prov := agenttest.NewScriptedProvider(write("w1"), agenttest.Turn{Text: "a"}, write("w2"), agenttest.Turn{Text: "b"})
	var asked []string
	dir := t.TempDir()
	c := newClientWith(t, Config{
		Settings: config.Default(),
		Posture:  policy.PostureAuto,
		Models:   func(string) (session.Model, error) { return session.Model{Provider: prov, Name: "m"}, nil },
		Dir:      filepath.Join(dir, "sessions"),
		ProjectSettings: func(cwd string) (*config.Config, error) {
			asked = append(asked, cwd)
			set := config.Default()
			switch cwd {
			case real(t, strict):
				set.Permissions.Deny = []string{"write_file"}
			case real(t, broken):
				return nil, errors.New(`reasonix.toml: "permissions.posture" loosens the configuration; run reasonix trust`)
			}
			return set, nil
		},
	})
	c.prov, c.dir = prov, dir
	c.initialize()
	a := c.newSession(strict)
	b := c.newSession(plain)
	c.prompt(a, "write x")
	c.prompt(b, "write x")
	if _, err := os.Stat(filepath.Join(strict, "x.txt")); err == nil {
		t.Error("the strict project's deny rule did not hold in its session")
	}
	if _, err := os.Stat(filepath.Join(plain, "x.txt")); err != nil {
		t.Errorf("the plain project's session could not write: %v", err)
	}
	err := c.try("session/new", map[string]any{"cwd": broken, "mcpServers": []any{}}, nil)
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "reasonix trust") {
		t.Errorf("a cwd whose configuration cannot be used: %v", err)
	}
	if len(asked) != 3 {
		t.Errorf("ProjectSettings asked for %q", asked)
	}
}

func real(t *testing.T, dir string) string {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
