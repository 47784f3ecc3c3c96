package envexpand

import (
	"errors"
	"strings"
	"testing"
)

func lookupFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

var env = lookupFrom(map[string]string{"A": "alpha", "EMPTY": "", "B_2": "beta", "HOME": "/home/u"})

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		bare bool
		want string
	}{
		{"", false, ""},
		{"plain $A and $ alone", false, "plain $A and $ alone"},
		{"plain $A and $ alone", true, "plain alpha and $ alone"},
		{"${A}", false, "alpha"},
		{"x${A}y${B_2}z", false, "xalphaybetaz"},
		{"${MISSING:-dflt}", false, "dflt"},
		{"${EMPTY:-dflt}", false, "dflt"},
		{"${EMPTY}", false, ""},
		{"${A:-dflt}", false, "alpha"},
		{"${MISSING:-}", false, ""},
		{"${MISSING:-a:-b}", false, "a:-b"},
		{"$${A}", false, "$alpha"},
		{"$${A}", true, "$alpha"},
		{"${A}}", false, "alpha}"},
		{"$HOME/x", true, "/home/u/x"},
		{"$B_2.$A", true, "beta.alpha"},
		{"/a$", true, "/a$"},
		{"$1", true, "$1"},
		{"${HOME}/.ssh", true, "/home/u/.ssh"},
	} {
		got, err := Expand(tc.in, env, Options{Bare: tc.bare})
		if err != nil || got != tc.want {
			t.Errorf("Expand(%q, bare=%v) = %q, %v; want %q", tc.in, tc.bare, got, err, tc.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		bare bool
		want string
	}{
		{"${A", false, `unterminated "${" at byte 0`},
		{"ok ${A} then ${B", false, `unterminated "${" at byte 13`},
		{"${}", true, "invalid variable reference"},
		{"${1A}", false, "invalid variable reference"},
		{"${A-x}", false, "invalid variable reference"},
		{"${A:-${B}}", false, `nested "${"`},
		{"${MISSING}", false, "${MISSING}: variable is not set"},
		{"$MISSING/x", true, "${MISSING}: variable is not set"},
	} {
		_, err := Expand(tc.in, env, Options{Bare: tc.bare})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Expand(%q, bare=%v) error = %v, want it to contain %q", tc.in, tc.bare, err, tc.want)
		}
	}
	if _, err := Expand("${MISSING}", env, Options{}); !errors.Is(err, ErrUnset) {
		t.Errorf("unset variable error %v does not wrap ErrUnset", err)
	}
	_, err := Expand("${SECRET} ${BROKEN", lookupFrom(map[string]string{"SECRET": "hunter2"}), Options{})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v must exist and not reveal the value", err)
	}
}

func TestExpandKeep(t *testing.T) {
	keep := func(name string) bool { return name == "ROOT" }
	got, err := Expand("${ROOT:-.}/a ${A} $ROOT", env, Options{Bare: true, Keep: keep})
	if want := "${ROOT:-.}/a alpha $ROOT"; err != nil || got != want {
		t.Errorf("Expand with Keep = %q, %v; want %q", got, err, want)
	}
	// A kept reference is still checked: a typo is reported now, not when
	// the later expansion runs.
	if _, err := Expand("${ROOT:-${A}}", env, Options{Keep: keep}); err == nil {
		t.Error("a malformed kept reference was accepted")
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{"A": true, "_x1": true, "a_B_9": true, "": false, "1A": false, "A-B": false, "Ä": false} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzExpand(f *testing.F) {
	for _, seed := range []string{"", "plain", "${A}", "${A:-d}", "${B:-}", "${", "x${A}y${", "${:-}", "${A:-${B}}",
		"$${A}}", "$A/$", "~/$HOME", "${ROOT}/$ROOT"} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	lookup := lookupFrom(map[string]string{"A": "alpha", "E": "", "HOME": "/h"})
	f.Fuzz(func(t *testing.T, s string, bare bool) {
		out, err := Expand(s, lookup, Options{Bare: bare})
		if !strings.Contains(s, "$") || (!bare && !strings.Contains(s, "${")) {
			if err != nil || out != s {
				t.Fatalf("text without a reference must pass through: %q -> %q, %v", s, out, err)
			}
			return
		}
		if bare {
			// Every braced reference the plain grammar accepts means the
			// same in the bare one: the two differ only on "$NAME".
			if plain, perr := Expand(s, lookup, Options{}); perr == nil && !strings.Contains(strings.ReplaceAll(s, "${", ""), "$") && (err != nil || plain != out) {
				t.Fatalf("bare and plain grammars disagree on %q: %q, %v vs %q", s, out, err, plain)
			}
		}
		if err != nil {
			if strings.Contains(err.Error(), "alpha") || strings.Contains(err.Error(), "/h") && !strings.Contains(s, "/h") {
				t.Fatalf("error %v reveals a value", err)
			}
			return
		}
		// Keeping a variable must never change anything else.
		kept, kerr := Expand(s, lookup, Options{Bare: bare, Keep: func(n string) bool { return n == "ROOT" }})
		if kerr != nil && !strings.Contains(s, "ROOT") {
			t.Fatalf("Keep failed where Expand succeeded: %v", kerr)
		}
		if !strings.Contains(s, "ROOT") && kept != out {
			t.Fatalf("Keep changed unrelated output: %q vs %q", kept, out)
		}
	})
}
