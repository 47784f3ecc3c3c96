package policy

import (
	"strings"
	"testing"
)

// TestTailsAreBounded: commands nested in other commands' arguments are
// analysed up to maxTails, after which the command counts as unreadable,
// so `xargs xargs … rm` neither takes exponential time nor slips past a
// deny rule.
func TestTailsAreBounded(t *testing.T) {
	p := mustPolicy(t, Config{Mode: "allow", Deny: []string{"Bash(rm:*)"}})
	for _, w := range []string{"xargs", "strace", "find . -exec", "fakeroot", "busybox"} {
		cmd := strings.Repeat(w+" ", 60) + "true"
		f := analyzeShell(cmd)
		if len(f.extra) > 4096 || f.dynName == "" {
			t.Errorf("%s ×60: %d word lists, dynName %q", w, len(f.extra), f.dynName)
		}
		if d := p.Decide("bash", false, bashArgs(cmd)); d != Deny {
			t.Errorf("%s ×60 with a Bash deny rule: %v", w, d)
		}
	}
	if f := analyzeShell("echo x | xargs sh -c 'rm {}'"); f.dynName != "" || len(f.extra) > 64 {
		t.Errorf("one tail: dynName %q, %d word lists", f.dynName, len(f.extra))
	}
}
