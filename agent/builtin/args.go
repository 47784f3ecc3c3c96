package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// decodeArgs parses a tool's JSON arguments into dst (a pointer to a struct
// with json tags). The errors are written for the model: they name the tool
// and the offending field so the next call can be corrected. required lists
// top-level fields that must be present and not null. Unknown fields are
// refused, because a misspelt argument silently ignored (file_path for path)
// would make the tool do something the model did not ask for.
func decodeArgs(tool string, raw json.RawMessage, dst any, required ...string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return fmt.Errorf("%s: arguments must be a JSON object: %s", tool, jsonProblem(err))
	}
	// Unknown names first: {"file_path": …} is better answered with the
	// list of real names than with "missing path".
	known := jsonFieldNames(dst)
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(known, name) {
			return fmt.Errorf("%s: unknown argument %q (known arguments: %s)", tool, name, strings.Join(known, ", "))
		}
	}
	for _, name := range required {
		v, ok := fields[name]
		if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return fmt.Errorf("%s: missing required argument %q", tool, name)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("%s: %s", tool, describeDecodeError(err, dst))
	}
	return nil
}

// jsonProblem renders a JSON syntax error without Go type names.
func jsonProblem(err error) string {
	if err == nil {
		return "got null"
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("invalid JSON at byte %d: %s", syn.Offset, syn.Error())
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return "got a JSON " + typ.Value
	}
	return err.Error()
}

// describeDecodeError turns encoding/json's errors, which mention Go types,
// into sentences about argument names and JSON types.
func describeDecodeError(err error, dst any) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := typ.Field
		if field == "" {
			field = "(arguments)"
		}
		return fmt.Sprintf("argument %q must be %s, got %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	}
	// DisallowUnknownFields reports `json: unknown field "x"` with no typed error.
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		name := strings.TrimPrefix(msg, "json: unknown field ")
		known := jsonFieldNames(dst)
		return fmt.Sprintf("unknown argument %s (known arguments: %s)", name, strings.Join(known, ", "))
	}
	return "invalid arguments: " + strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON type that a Go kind decodes from.
func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "a boolean (true or false)"
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	default:
		return "a " + goKind
	}
}

// jsonFieldNames lists the argument names the struct behind dst accepts,
// for the unknown-argument error.
func jsonFieldNames(dst any) []string {
	t := reflect.TypeOf(dst)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
