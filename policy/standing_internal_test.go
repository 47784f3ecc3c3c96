package policy

import (
	"fmt"
	"testing"
)

// BenchmarkGrantLookup measures the standing grant lookup alone — the
// part of a decision that grows with the grants — among 1,000 grants (a
// third each Bash prefixes, edit globs and tools), for a shell call and
// for a file edit whose grant is the last glob.
func BenchmarkGrantLookup(b *testing.B) {
	var rules []StandingRule
	for i := range 999 {
		var s string
		switch i % 3 {
		case 0:
			s = fmt.Sprintf("Bash(make target%d:*)", i)
		case 1:
			s = fmt.Sprintf("Edit(docs%d/**)", i) // docs997 is the last
		default:
			s = fmt.Sprintf("mcp__grant%d__tool", i)
		}
		rules = append(rules, StandingRule{ID: fmt.Sprint(i), Scope: s})
	}
	rules = append(rules, StandingRule{ID: "go", Scope: "Bash(go test:*)"})
	set, err := NewGrantSet(rules)
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	wd := b.TempDir()
	for _, c := range []struct {
		name, tool string
		args       []byte
		want       string
	}{
		{"bash", "bash", []byte(`{"command":"go test ./pkg/... -run TestX -count=1"}`), "go"},
		{"edit", "write_file", []byte(`{"path":"docs997/guide/a.md","content":"x"}`), "997"},
	} {
		q := Query{Tool: c.tool, Args: c.args, Workdir: wd}
		_, f := p.evaluate(q)
		if g, ok := set.match(q, f, false); !ok || g.ID != c.want {
			b.Fatalf("%s matched %+v %v", c.name, g, ok)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				set.match(q, f, false)
			}
		})
	}
}
