package cronspec

import (
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, expr, zone string) *Spec {
	t.Helper()
	s, err := Parse(expr, zone)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", expr, zone, err)
	}
	return s
}

func TestParseAccepts(t *testing.T) {
	for _, c := range []struct{ expr, zone, loc string }{
		{"0 3 * * *", "", "UTC"},
		{"@daily", "Europe/Berlin", "Europe/Berlin"},
		{"@every 10m", "", "UTC"},
		{"CRON_TZ=Asia/Tokyo 0 9 * * 1-5", "", "Asia/Tokyo"},
		{"CRON_TZ=Asia/Tokyo 0 9 * * 1-5", "Asia/Tokyo", "Asia/Tokyo"},
		{"0 0 29 2 *", "", "UTC"}, // leap day: rare but possible
	} {
		s := mustParse(t, c.expr, c.zone)
		if s.Location().String() != c.loc {
			t.Errorf("%q: location %s, want %s", c.expr, s.Location(), c.loc)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, c := range []struct{ expr, zone, want string }{
		{"0 0 30 2 *", "", "never fires"},
		{"0 0 31 4 *", "Europe/Berlin", "never fires"},
		{"0 3 * * *", "Mars/Olympus", "unknown time zone"},
		{"0 3 * * *", "Local", "unknown time zone"},
		{"CRON_TZ=Nowhere/Land 0 3 * * *", "", "unknown time zone"},
		{"CRON_TZ=Asia/Tokyo 0 3 * * *", "UTC", "disagree"},
		{"", "", "empty"},
		{"0 3 * *", "", "cron expression"},
		{"0 0 3 * * *", "", "cron expression"}, // six fields: seconds are not a field
		{"@reboot", "", "cron expression"},
		{"61 * * * *", "", "cron expression"},
		{strings.Repeat("1", 300), "", "longer than"},
	} {
		_, err := Parse(c.expr, c.zone)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q, %q) = %v, want an error containing %q", c.expr, c.zone, err, c.want)
		}
	}
}

// TestDSTBerlin pins robfig/cron's behaviour around daylight saving time,
// which docs/SPEC.md describes: on the spring-forward day a time inside the
// skipped hour does not fire at all (02:30 Europe/Berlin on 29 March 2026),
// and on the fall-back day a time inside the repeated hour fires twice,
// once per offset (02:30 CEST and 02:30 CET on 25 October 2026).
func TestDSTBerlin(t *testing.T) {
	s := mustParse(t, "30 2 * * *", "Europe/Berlin")
	ber := s.Location()
	walk := func(from time.Time, n int) []string {
		var out []string
		for t := from; len(out) < n; {
			t = s.Next(t)
			out = append(out, t.In(ber).Format("2006-01-02 15:04 MST"))
		}
		return out
	}
	spring := walk(time.Date(2026, 3, 28, 12, 0, 0, 0, ber), 2)
	if want := []string{"2026-03-30 02:30 CEST", "2026-03-31 02:30 CEST"}; strings.Join(spring, ",") != strings.Join(want, ",") {
		t.Errorf("spring forward: %v, want %v (the 29th has no 02:30 and is skipped)", spring, want)
	}
	autumn := walk(time.Date(2026, 10, 24, 12, 0, 0, 0, ber), 3)
	if want := []string{"2026-10-25 02:30 CEST", "2026-10-25 02:30 CET", "2026-10-26 02:30 CET"}; strings.Join(autumn, ",") != strings.Join(want, ",") {
		t.Errorf("fall back: %v, want %v (the repeated hour fires twice)", autumn, want)
	}
	// An hourly spec keeps firing through the change: no 02:00 on the
	// spring day, two on the autumn day, an hour apart in real time.
	hourly := mustParse(t, "0 * * * *", "Europe/Berlin")
	if n := hourly.Next(time.Date(2026, 3, 29, 1, 30, 0, 0, ber)); n.In(ber).Hour() != 3 {
		t.Errorf("hourly after 01:30 on the spring day: %v, want 03:00", n.In(ber))
	}
	first := hourly.Next(time.Date(2026, 10, 25, 1, 30, 0, 0, ber))
	if second := hourly.Next(first); second.Sub(first) != time.Hour || first.In(ber).Hour() != 2 || second.In(ber).Hour() != 2 {
		t.Errorf("hourly on the autumn day: %v then %v, want 02:00 twice an hour apart", first.In(ber), second.In(ber))
	}
}

func TestLatest(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	every := mustParse(t, "@every 1s", "")
	if got := every.Latest(base, base.Add(999*time.Millisecond)); !got.IsZero() {
		t.Errorf("@every 1s before the first tick: %v", got)
	}
	if got, want := every.Latest(base, base.Add(6*time.Hour+500*time.Millisecond)), base.Add(6*time.Hour); !got.Equal(want) {
		t.Errorf("@every 1s over six hours: %v, want %v", got, want)
	}
	hourly := mustParse(t, "0 * * * *", "")
	if got, want := hourly.Latest(base, base.Add(6*time.Hour+30*time.Minute)), base.Add(6*time.Hour); !got.Equal(want) {
		t.Errorf("hourly over six hours: %v, want %v", got, want)
	}
	if got := hourly.Latest(base, base.Add(59*time.Minute)); !got.IsZero() {
		t.Errorf("hourly within the first hour: %v", got)
	}
	if got := hourly.Latest(base, base); !got.IsZero() {
		t.Errorf("empty interval: %v", got)
	}
}

// FuzzParse: whatever the configuration holds, Parse answers with a spec
// that fires or an error, and never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0 3 * * *", "@every 10m", "CRON_TZ=Europe/Berlin 30 2 * * *", "0 0 30 2 *", "@daily", "*/0 * * * *", "TZ= 1 1 1 1 1"} {
		f.Add(s, "")
		f.Add(s, "Europe/Berlin")
	}
	f.Fuzz(func(t *testing.T, expr, zone string) {
		s, err := Parse(expr, zone)
		if err != nil {
			return
		}
		if s.Next(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
			t.Fatalf("Parse(%q, %q) accepted a spec that never fires", expr, zone)
		}
	})
}
