package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompactRatioDefaultAndFile(t *testing.T) {
	f := newFixture(t)
	f.user(minimalProvider)
	if got := f.load().Agent.CompactRatio; got != DefaultCompactRatio {
		t.Fatalf("default compact_ratio = %g, want %g", got, DefaultCompactRatio)
	}
	f.proj("[agent]\ncompact_ratio = 0.7\n")
	c := f.load()
	if c.Agent.CompactRatio != 0.7 || c.Origin("agent.compact_ratio") == "" {
		t.Fatalf("compact_ratio = %g from %q", c.Agent.CompactRatio, c.Origin("agent.compact_ratio"))
	}
}

func TestCompactRatioOutOfRange(t *testing.T) {
	for _, v := range []string{"0", "0.0", "1", "1.0", "-0.5", "1.5", "nan"} {
		f := newFixture(t)
		path := f.proj(minimalProvider + "[agent]\ncompact_ratio = " + v + "\n")
		wantContains(t, f.loadErr(), path, "agent.compact_ratio", "strictly between 0 and 1")
	}
	// A Config built in code with the zero value means the default.
	c := Default()
	c.Agent.CompactRatio = 0
	if err := c.Validate(); err != nil || c.Agent.EffectiveCompactRatio() != DefaultCompactRatio {
		t.Fatalf("zero ratio in code: %v, %g", err, c.Agent.EffectiveCompactRatio())
	}
}

func TestContextWindowDefaultsPerKind(t *testing.T) {
	f := newFixture(t)
	f.proj(`
[[providers]]
name = "o"
model = "m"

[[providers]]
name = "a"
kind = "anthropic"
model = "claude"

[[providers]]
name = "off"
model = "m"
context_window = 0

[[providers]]
name = "r"
kind = "responses"
models = ["big", "small"]
context_window = 400000
model_overrides = { small = { context_window = 8000 } }
`)
	c := f.load()
	for _, tc := range []struct {
		ref  string
		want int
	}{{"o", 128_000}, {"a", 200_000}, {"off", 0}, {"r/big", 400_000}, {"r/small", 8000}} {
		r, err := c.ResolveModel(tc.ref)
		if err != nil || r.ContextWindow != tc.want {
			t.Errorf("%s: context window %d (%v), want %d", tc.ref, r.ContextWindow, err, tc.want)
		}
	}
}

func TestWriteCompactRatio(t *testing.T) {
	for name, tc := range map[string]struct{ before, want string }{
		"missing file":    {"", "[agent]\ncompact_ratio = 0.8\n"},
		"no agent table":  {"default_model = \"p\"\n", "default_model = \"p\"\n\n[agent]\ncompact_ratio = 0.8\n"},
		"agent table":     {"[agent]\nmax_steps = 5\n\n[tools]\n", "[agent]\ncompact_ratio = 0.8\nmax_steps = 5\n\n[tools]\n"},
		"replace the key": {"# mine\n[agent]\nmax_steps = 5\ncompact_ratio = 0.5 # old\n", "# mine\n[agent]\nmax_steps = 5\ncompact_ratio = 0.8\n"},
		"other table key": {"[runner]\ncompact_ratio_x = 1\n[agent]\n", "[runner]\ncompact_ratio_x = 1\n[agent]\ncompact_ratio = 0.8\n"},
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, UserFile)
			if tc.before != "" {
				if err := os.WriteFile(path, []byte(tc.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := WriteCompactRatio(home, 0.8)
			if err != nil || got != path {
				t.Fatalf("WriteCompactRatio = %q, %v", got, err)
			}
			data, _ := os.ReadFile(path)
			if string(data) != tc.want {
				t.Fatalf("file:\n%s\nwant:\n%s", data, tc.want)
			}
		})
	}
}

func TestWriteCompactRatioRefuses(t *testing.T) {
	home := t.TempDir()
	if _, err := WriteCompactRatio(home, 1); err == nil || !strings.Contains(err.Error(), "strictly between") {
		t.Fatalf("ratio 1: %v", err)
	}
	path := filepath.Join(home, UserFile)
	before := "agent = { max_steps = 3 }\n"
	os.WriteFile(path, []byte(before), 0o600)
	if _, err := WriteCompactRatio(home, 0.8); err == nil {
		t.Fatal("inline [agent] table was edited")
	}
	if data, _ := os.ReadFile(path); string(data) != before {
		t.Fatalf("file changed on error: %q", data)
	}
	os.WriteFile(path, []byte("[agent\n"), 0o600)
	if _, err := WriteCompactRatio(home, 0.8); err == nil {
		t.Fatal("a broken file was edited")
	}
}
