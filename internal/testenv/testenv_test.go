package testenv

import "testing"

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		ci, require string
		want        map[string]bool
	}{
		{"", "", map[string]bool{Postgres: false, Bwrap: false, Git: false}},
		{"false", "", map[string]bool{Postgres: false, Bwrap: false, Git: false}},
		{"true", "", map[string]bool{Postgres: true, Bwrap: true, Git: true}},
		{"", "all", map[string]bool{Postgres: true, Bwrap: true, Git: true}},
		{"", "postgres, bwrap", map[string]bool{Postgres: true, Bwrap: true, Git: false}},
		{"0", "git", map[string]bool{Postgres: false, Bwrap: false, Git: true}},
	} {
		t.Setenv("CI", c.ci)
		t.Setenv("REASONIX_TEST_REQUIRE", c.require)
		for dep, want := range c.want {
			if got := Required(dep); got != want {
				t.Errorf("CI=%q REASONIX_TEST_REQUIRE=%q: Required(%s) = %v, want %v", c.ci, c.require, dep, got, want)
			}
		}
	}
}

func TestRequiredPanicsOnAnUnknownName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Required(\"postgresql\") did not panic")
		}
	}()
	Required("postgresql")
}

// outcome runs Missing against a recording TB and reports whether it skipped
// or failed.
type outcome struct {
	testing.TB
	skipped, failed bool
}

func (o *outcome) Helper()               {}
func (o *outcome) Skipf(string, ...any)  { o.skipped = true }
func (o *outcome) Fatalf(string, ...any) { o.failed = true }

func TestMissingSkipsUnlessRequired(t *testing.T) {
	t.Setenv("CI", "")
	for _, c := range []struct {
		require    string
		skip, fail bool
	}{
		{"", true, false},
		{"bwrap", false, true},
		{"git", true, false},
		{"bubblewrap", false, true}, // unknown name: a failure, not a silent skip
	} {
		t.Setenv("REASONIX_TEST_REQUIRE", c.require)
		o := &outcome{TB: t}
		Missing(o, Bwrap, "not installed")
		// The real Fatalf and Skipf stop the test; the recorder returns, so
		// only the first decision counts.
		if skip, fail := o.skipped, o.failed; fail != c.fail || (!c.fail && skip != c.skip) {
			t.Errorf("REASONIX_TEST_REQUIRE=%q: skipped %v failed %v, want skip %v fail %v", c.require, skip, fail, c.skip, c.fail)
		}
	}
}
