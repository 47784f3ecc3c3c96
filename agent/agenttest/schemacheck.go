package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"reasonix/agent"
)

// objectSchema is the part of a JSON Schema the suite checks arguments
// against: the top level of an object schema.
type objectSchema struct {
	Properties map[string]struct {
		Type any `json:"type"` // a name or a list of names
	} `json:"properties"`
	Required   []string `json:"required"`
	Additional any      `json:"additionalProperties"`
}

// checkSchema reports what is wrong with the tool's parameters schema and
// returns it decoded, or nil when it cannot be read.
func checkSchema(t *testing.T, tl agent.Tool) *objectSchema {
	t.Helper()
	raw := tl.Schema()
	if _, err := agent.CanonicalSchema(raw); err != nil {
		t.Errorf("%s: the tool registry refuses its schema: %v", tl.Name(), err)
		return nil
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return &objectSchema{} // the registry reads "no schema" as "any object"
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Errorf("%s: schema: %v", tl.Name(), err)
		return nil
	}
	if p, ok := top["properties"]; ok {
		var props map[string]map[string]any
		if err := json.Unmarshal(p, &props); err != nil {
			t.Errorf("%s: schema properties must be an object of schemas: %v", tl.Name(), err)
			return nil
		}
	}
	var s objectSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Errorf("%s: schema: %v", tl.Name(), err)
		return nil
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			t.Errorf("%s: schema requires %q, which is not among its properties", tl.Name(), r)
		}
	}
	return &s
}

// validate checks args against the top level of the schema: required
// arguments present, no undeclared ones when the schema is closed, and each
// argument of its declared JSON type.
func (s *objectSchema) validate(args string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return fmt.Errorf("not a JSON object")
	}
	for _, r := range s.Required {
		if _, ok := obj[r]; !ok {
			return fmt.Errorf("missing required %q", r)
		}
	}
	for name, v := range obj {
		prop, ok := s.Properties[name]
		if !ok {
			if s.Additional == false {
				return fmt.Errorf("%q is not a declared property", name)
			}
			continue
		}
		var types []string
		switch ty := prop.Type.(type) {
		case string:
			types = []string{ty}
		case []any:
			for _, x := range ty {
				if n, ok := x.(string); ok {
					types = append(types, n)
				}
			}
		}
		if len(types) > 0 && !hasJSONType(v, types) {
			return fmt.Errorf("%q is %s, want %s", name, v, strings.Join(types, " or "))
		}
	}
	return nil
}

func hasJSONType(v json.RawMessage, types []string) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	for _, ty := range types {
		switch x := x.(type) {
		case nil:
			if ty == "null" {
				return true
			}
		case bool:
			if ty == "boolean" {
				return true
			}
		case float64:
			if ty == "number" || ty == "integer" && x == float64(int64(x)) {
				return true
			}
		case string:
			if ty == "string" {
				return true
			}
		case []any:
			if ty == "array" {
				return true
			}
		case map[string]any:
			if ty == "object" {
				return true
			}
		}
	}
	return false
}
