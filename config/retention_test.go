package config

import (
	"testing"
	"time"
)

// TestRetentionParse: days, durations and "none" read; zero, negative,
// bare numbers and nonsense are refused; String writes what it reads.
func TestRetentionParse(t *testing.T) {
	for in, want := range map[string]Retention{
		"7d": Retention(7 * 24 * time.Hour), "90d": DefaultRetain, "36h": Retention(36 * time.Hour),
		"none": NoRetention, " NONE ": NoRetention, "90m": Retention(90 * time.Minute),
	} {
		got, err := ParseRetention(in)
		if err != nil || got != want {
			t.Errorf("ParseRetention(%q) = %v, %v; want %v", in, got, err, want)
			continue
		}
		if again, err := ParseRetention(got.String()); err != nil || again != got {
			t.Errorf("round trip of %q through %q = %v, %v", in, got.String(), again, err)
		}
	}
	for _, in := range []string{"", "0", "0d", "-1d", "7", "7 d", "1.5d", "d", "-3h", "forever", "999999d"} {
		if got, err := ParseRetention(in); err == nil {
			t.Errorf("ParseRetention(%q) = %v; want an error", in, got)
		}
	}
	if DefaultKeepWorktrees.String() != "7d" || NoRetention.String() != "none" || Retention(0).String() != "" {
		t.Errorf("strings: %q %q %q", DefaultKeepWorktrees, NoRetention, Retention(0))
	}
}

// TestRetentionKeys: the [runner] keys load, default to unset, and are
// checked against their minimum.
func TestRetentionKeys(t *testing.T) {
	f := newFixture(t)
	f.user("[runner]\nkeep_worktrees = \"3d\"\nretain = \"none\"\n")
	c := f.load()
	if c.Runner.KeepWorktrees != Retention(3*24*time.Hour) || !c.Runner.Retain.None() {
		t.Fatalf("runner = %+v", c.Runner)
	}
	for doc, field := range map[string]string{
		"[runner]\nkeep_worktrees = \"30m\"\n": "runner.keep_worktrees",
		"[runner]\nretain = \"12h\"\n":         "runner.retain",
		"[runner]\nretain = 90\n":              "runner.retain",
	} {
		f := newFixture(t)
		f.user(doc)
		wantContains(t, f.loadErr(), field)
	}
}
