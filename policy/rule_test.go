package policy

import (
	"strings"
	"testing"
)

func TestParseRuleCanonicalForms(t *testing.T) {
	for in, want := range map[string]string{
		"Bash":                    "Bash",
		"bash":                    "Bash",
		"Bash(go test:*)":         "Bash(go test:*)",
		"Bash(go test *)":         "Bash(go test:*)", // legacy prefix, saved as :*
		"bash(go  test:*)":        "Bash(go test:*)",
		"Bash(rm -rf*)":           "Bash(rm -rf*)",
		"Bash(npm run build)":     "Bash(npm run build)",
		"Bash=go test ./... && x": "Bash=go test ./... && x",
		" Edit(./docs/**) ":       "Edit(docs/**)",
		"Read(/etc/*)":            "Read(/etc/*)",
		"write_file(src/*.go)":    "write_file(src/*.go)",
		"mcp__github__create_pr":  "mcp__github__create_pr",
	} {
		r, err := ParseRule(in)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", in, err)
			continue
		}
		if got := r.String(); got != want {
			t.Errorf("ParseRule(%q).String() = %q, want %q", in, got, want)
		}
		again, err := ParseRule(r.String())
		if err != nil || again.String() != r.String() {
			t.Errorf("round trip of %q: %q, %v", in, again.String(), err)
		}
	}
}

func TestParseRuleErrorsQuoteTheRule(t *testing.T) {
	for _, in := range []string{
		"", "Bash(", "Bash()", "Bash(:*)", "Edit=x", "Bash=", "Bash(a && b)", "Bash(echo $HOME)",
		"Bash(git * --help)", "Edit([)", "my tool", "Bash(go test:*", "(x)",
	} {
		_, err := ParseRule(in)
		if err == nil {
			t.Errorf("ParseRule(%q): no error", in)
			continue
		}
		if !strings.HasPrefix(err.Error(), "policy: rule ") || !strings.Contains(err.Error(), strings.TrimSpace(in)) {
			t.Errorf("ParseRule(%q) error %q does not quote the rule", in, err)
		}
	}
}

func TestNewReportsEveryBadRule(t *testing.T) {
	_, err := New(Config{Allow: []string{"Bash(go test:*)", "Bash("}, Deny: []string{"Edit=x"}, Mode: "ask"})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{`allow[1]: rule "Bash("`, `deny[0]: rule "Edit=x"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if _, err := New(Config{Mode: "sometimes"}); err == nil || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Errorf("bad mode: %v", err)
	}
}

func TestGlobMatching(t *testing.T) {
	cases := []struct {
		glob, path, workdir string
		broad, want         bool
	}{
		{"docs/**", "docs/a/b.md", "", false, true},
		{"docs/**", "docs", "", false, true},
		{"docs/*", "docs/a/b.md", "", false, false},
		{"docs/**", "/ws/docs/a.md", "/ws", false, true},
		{"docs/**", "/ws/docs/a.md", "", false, false},
		{".git/**", "/elsewhere/.git/config", "", true, true},
		{"docs/**", "docs/../.git/config", "", false, false},
		{"/etc/**", "/etc/passwd", "", false, true},
		{"/ws/src/*.go", "src/a.go", "/ws", false, true},
		{"a\\*b", "a*b", "", false, true},
		{"a\\*b", "axb", "", false, false},
	}
	for _, c := range cases {
		if got := matchPath(c.glob, c.path, c.workdir, c.broad); got != c.want {
			t.Errorf("matchPath(%q, %q, %q, %v) = %v", c.glob, c.path, c.workdir, c.broad, got)
		}
	}
}
