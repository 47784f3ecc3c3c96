package policy

import (
	"encoding/json"
	"testing"
)

func TestMCPToolsAreAuthorizedByInstallation(t *testing.T) {
	args := json.RawMessage(`{"text":"hi"}`)
	tests := []struct {
		name string
		cfg  Config
		tool string
		want Decision
	}{
		{"installed server's writer", Config{}, "mcp__example__wordcount", Allow},
		{"deny rule wins", Config{Deny: []string{"mcp__github__create_issue"}}, "mcp__github__create_issue", Deny},
		{"ask rule wins", Config{Ask: []string{"mcp__github__create_issue"}}, "mcp__github__create_issue", Ask},
		{"deny mode stays strict", Config{Mode: "deny"}, "mcp__example__wordcount", Deny},
		{"a built-in writer still asks", Config{}, "write_file", Ask},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Decide(tc.tool, false, args); got != tc.want {
				t.Errorf("Decide(%s) = %v, want %v", tc.tool, got, tc.want)
			}
		})
	}
}
