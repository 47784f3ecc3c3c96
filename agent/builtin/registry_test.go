package builtin

import (
	"encoding/json"
	"strings"
	"testing"

	"reasonix/agent"
)

// TestBuiltinHouseStyle holds the built-ins to more than the agent.Tool
// contract (which TestBuiltinsKeepTheToolContract checks): descriptions long
// enough to say when to use the tool, and closed, documented schemas.
func TestBuiltinHouseStyle(t *testing.T) {
	env, _ := testEnv(t)
	for _, name := range agent.Builtins() {
		tl := tool(t, env, name)
		if len(strings.TrimSpace(tl.Description())) < 40 {
			t.Errorf("%s: description too short: %q", name, tl.Description())
		}
		checkSchema(t, name, tl.Schema())
	}
}

// checkSchema asserts the conventions every built-in schema follows: a
// closed object whose properties have a type and a description or an enum.
func checkSchema(t *testing.T, name string, raw json.RawMessage) {
	t.Helper()
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Additional *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if s.Additional == nil || *s.Additional {
		t.Errorf("%s: schema must set additionalProperties false", name)
	}
	for prop, def := range s.Properties {
		var d struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal(def, &d); err != nil {
			t.Fatalf("%s.%s: %v", name, prop, err)
		}
		if d.Type == "" {
			t.Errorf("%s.%s: no type", name, prop)
		}
		if d.Description == "" && !strings.Contains(string(def), "enum") {
			t.Errorf("%s.%s: no description", name, prop)
		}
	}
}

// TestSubjectArgumentNames pins the argument names the permission layer
// reads a call's subject from.
func TestSubjectArgumentNames(t *testing.T) {
	env, _ := testEnv(t)
	subject := map[string]string{
		"bash": "command", "edit_file": "path", "glob": "pattern", "grep": "pattern", "ls": "path",
		"move_file": "path", "multi_edit": "path", "read_file": "path", "write_file": "path",
		"delete_range": "path", "delete_symbol": "path",
	}
	for name, arg := range subject {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tool(t, env, name).Schema(), &s); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Properties[arg]; !ok {
			t.Errorf("%s has no %q argument", name, arg)
		}
	}
}
