package builtin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
)

var allTools = []string{"bash", "edit_file", "glob", "grep", "ls", "move_file", "multi_edit", "read_file", "todo_write", "write_file"}

func TestEveryBuiltinIsRegisteredAndDescribed(t *testing.T) {
	names := agent.Builtins()
	for _, want := range allTools {
		if !slices.Contains(names, want) {
			t.Errorf("built-in %q is not registered (have %v)", want, names)
		}
	}
	env, _ := testEnv(t)
	r := agent.NewToolRegistry()
	if err := r.AddBuiltins(env, allTools); err != nil {
		t.Fatal(err)
	}
	var readOnly []string
	for _, name := range allTools {
		tl, _ := r.Get(name)
		if tl.Name() != name {
			t.Errorf("tool registered as %q calls itself %q", name, tl.Name())
		}
		if len(strings.TrimSpace(tl.Description())) < 40 {
			t.Errorf("%s: description too short: %q", name, tl.Description())
		}
		if _, err := agent.CanonicalSchema(tl.Schema()); err != nil {
			t.Errorf("%s: schema: %v", name, err)
		}
		checkSchema(t, name, tl.Schema())
		if agent.IsReadOnly(tl) {
			readOnly = append(readOnly, name)
		}
	}
	want := []string{"glob", "grep", "ls", "read_file", "todo_write"}
	if !slices.Equal(readOnly, want) {
		t.Errorf("read-only tools = %v, want %v", readOnly, want)
	}
}

// checkSchema asserts the conventions every built-in schema follows: a
// closed object whose required fields are declared properties with a
// description or an enum.
func checkSchema(t *testing.T, name string, raw json.RawMessage) {
	t.Helper()
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Additional *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if s.Additional == nil || *s.Additional {
		t.Errorf("%s: schema must set additionalProperties false", name)
	}
	for _, req := range s.Required {
		if _, ok := s.Properties[req]; !ok {
			t.Errorf("%s: required %q is not a property", name, req)
		}
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
