package session

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecideTakesEachRoute: each route is taken by the inputs that should
// take it, and quoted examples do not change the route (seed §3.5).
func TestDecideTakesEachRoute(t *testing.T) {
	structured := "Tidy the release:\n- bump the version in cmd/reasonix/version.go\n- update docs/SPEC.md\n- regenerate deploy/k8s/base"
	cases := []struct {
		name   string
		in     RouteInput
		route  Route
		reason string
	}{
		{"no planner", RouteInput{Text: structured}, RouteExecutorOnly, "no planner configured"},
		{"plan-only directive", RouteInput{Text: "Refactor the store package, plan only.", Planner: true}, RoutePlanOnly, "explicit plan-only request"},
		{"plan-only after the task clause", RouteInput{Text: "Move auth into its own package; don't implement anything yet", Planner: true}, RoutePlanOnly, ""},
		{"plan-only metadata", RouteInput{Text: "add a flag", PlanOnly: true, Planner: true}, RoutePlanOnly, ""},
		{"plan for approval", RouteInput{Text: "Rewrite the scheduler and wait for my approval before you change code", Planner: true}, RoutePlanForApproval, ""},
		{"quoted directive is an example", RouteInput{Text: `fix the typo in README.md where it says "plan only"`, Planner: true}, RouteExecutorOnly, "atomic edit"},
		{"synthetic", RouteInput{Text: structured, Synthetic: true, Planner: true}, RouteExecutorOnly, "synthetic turn"},
		{"short reply", RouteInput{Text: "yes, go ahead", Planner: true}, RouteExecutorOnly, "short contextual reply"},
		{"read-only", RouteInput{Text: "Explain how the queue claims a task and where the lease is renewed in this code", Planner: true}, RouteExecutorOnly, "bounded read-only action"},
		{"atomic edit", RouteInput{Text: "Fix the off-by-one in runner/queue.go", Planner: true}, RouteExecutorOnly, "atomic edit"},
		{"atomic edit in a goal", RouteInput{Text: "Fix the off-by-one in runner/queue.go", Goal: true, Planner: true}, RouteExecutorOnly, "atomic edit"},
		{"structured", RouteInput{Text: structured, Planner: true}, RouteFull, ""},
		{"high risk", RouteInput{Text: "Add a database migration that splits the tasks table", Planner: true}, RouteFull, ""},
		{"cross-surface", RouteInput{Text: "Make runner/a.go, bot/b.go and config/c.go agree on the new name", Planner: true}, RouteFull, ""},
		{"ambiguous", RouteInput{Text: "the nightly job seems off lately, something with the timing of the runs", Planner: true}, RouteLight, "ambiguous request"},
		{"non-atomic change", RouteInput{Text: strings.Repeat("add a retry with backoff to the webhook sender and log each attempt clearly ", 3), Planner: true}, RouteLight, "non-atomic change"},
		{"non-atomic change in a goal", RouteInput{Text: strings.Repeat("add a retry with backoff to the webhook sender and log each attempt clearly ", 3), Goal: true, Planner: true}, RouteFull, "non-atomic change in an active goal"},
	}
	for _, c := range cases {
		d := Decide(c.in)
		if d.Route != c.route || c.reason != "" && d.Reason != c.reason {
			t.Errorf("%s: route %s (%s), want %s %s", c.name, d.Route, d.Reason, c.route, c.reason)
		}
		if again := Decide(c.in); again != d {
			t.Errorf("%s: not deterministic: %+v then %+v", c.name, d, again)
		}
	}
}

// The decision carries counts and flags, never the user's words.
func TestRouteDecisionIsPrivacySafe(t *testing.T) {
	d := Decide(RouteInput{Text: "Rotate the secret hunter2 in config/prod.yaml", Planner: true})
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if d.Words != 8 || d.Paths != 1 || strings.Contains(string(raw), "hunter2") || strings.Contains(string(raw), "prod") {
		t.Errorf("decision %s", raw)
	}
}

// BenchmarkDecide: the route decision must stay well under 100 µs (CPU:
// BenchmarkDecideCPU; 4.4 µs typical, 62 µs for 4 KiB after the single
// pass, from 8.2 and 133 µs on the same loaded machine): for
// a typical request, and for the longest text it judges (4 KiB of a
// structured request).
func BenchmarkDecide(b *testing.B) {
	for _, bc := range decideCases {
		b.Run(bc.name, func(b *testing.B) {
			in := RouteInput{Text: bc.text, Goal: true, Planner: true}
			for b.Loop() {
				Decide(in)
			}
		})
	}
}

// decideCases are the benchmarks' texts: a typical request, and the
// longest text the policy judges (4 KiB of a structured request).
var decideCases = []struct{ name, text string }{
	{"typical", "Add a retry with backoff to the webhook sender in runner/webhook/send.go, log each attempt, and make sure the tests in runner/webhook cover a 503 followed by a 200."},
	{"4KiB", "Tidy the release:\n" + strings.Repeat("- bump the version in cmd/reasonix/version.go and update docs/SPEC.md with \"plan only\" as an example\n", 40)},
}
