package config

import "testing"

func TestScheduleDefaults(t *testing.T) {
	f := newFixture(t)
	f.user(`
[[workspaces]]
name = "app"
repo = "/srv/app"

[[schedules]]
name = "nightly"
cron = "0 3 * * *"
timezone = "Europe/Berlin"
prompt = "update dependencies"
workspace = "app"
notify = [{ transport = "slack", channel = "C1" }]
`)
	c := f.load()
	if len(c.Schedules) != 1 {
		t.Fatalf("schedules = %+v", c.Schedules)
	}
	s := c.Schedules[0]
	if s.Posture != "ask" || s.Overlap != OverlapSkip || s.CatchUp != CatchUpLatest || s.MaxFailures != 3 ||
		!s.IsEnabled() || s.Source == "" || s.Notify[0].Channel != "C1" {
		t.Errorf("defaults not applied: %+v", s)
	}
}

// TestScheduleErrors: each mistake is a config error naming the schedule
// and the key, so `serve` refuses to start instead of never firing.
func TestScheduleErrors(t *testing.T) {
	for _, c := range []struct{ name, entry, want string }{
		{"impossible date", `cron = "0 0 30 2 *"`, `schedules[s].cron: cron expression "0 0 30 2 *" never fires`},
		{"unknown zone", "cron = \"0 3 * * *\"\ntimezone = \"Europe/Atlantis\"", `schedules[s].cron: unknown time zone "Europe/Atlantis"`},
		{"unknown inline zone", `cron = "CRON_TZ=Mars/Base 0 3 * * *"`, `schedules[s].cron: unknown time zone "Mars/Base"`},
		{"bad expression", `cron = "every night"`, `schedules[s].cron: cron expression`},
		{"missing cron", ``, `schedules[s].cron: is required`},
		{"overlap", "cron = \"@daily\"\noverlap = \"parallel\"", `schedules[s].overlap: "parallel" is not one of skip, queue`},
		{"catch_up", "cron = \"@daily\"\ncatch_up = \"all\"", `schedules[s].catch_up: "all" is not one of latest, none`},
		{"posture", "cron = \"@daily\"\nposture = \"reckless\"", `posture "reckless" is not one of`},
		{"workspace", "cron = \"@daily\"\nworkspace = \"nope\"", `schedules[s].workspace: "nope" is not a [[workspaces]] name`},
		{"max_failures", "cron = \"@daily\"\nmax_failures = -1", `schedules[s].max_failures: must be between 1 and 1000`},
		{"notify", "cron = \"@daily\"\nnotify = [{ transport = \"slack\" }]", `schedules[s].notify: entry 0 needs a transport and a channel`},
		{"unknown key", "cron = \"@daily\"\nevery = \"1h\"", `unknown key "schedules.every"`},
		{"budget without goal", "cron = \"@daily\"\nbudget_usd = 2.5", `schedules[s].budget_usd: is a goal's cost budget`},
		{"negative budget", "cron = \"@daily\"\ngoal = true\nbudget_usd = -1", `schedules[s].budget_usd: must be a non-negative amount of USD`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.user("[[schedules]]\nname = \"s\"\nprompt = \"p\"\n" + c.entry + "\n")
			wantContains(t, f.loadErr(), c.want)
		})
	}
	f := newFixture(t)
	f.user("[[schedules]]\nname = \"s\"\ncron = \"@daily\"\n")
	wantContains(t, f.loadErr(), `schedules[s].prompt: is required`)
}
