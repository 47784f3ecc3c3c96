package relay

import (
	"strings"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/runner"
	"reasonix/runner/store"
)

// formatOnly is a transport that only formats, for rendering tests.
type formatOnly struct{ bot.Transport }

func (formatOnly) Format() bot.Format { return mdFormat{} }

// The final report names the pull request a published task opened in
// place of the bare branch.
func TestFinalReportLinksThePullRequest(t *testing.T) {
	w := &watcher{r: &Relay{cfg: Config{MaxReportRunes: 2000}}, t: formatOnly{}, v: view{taskID: "t_1"}}
	ev := runner.Event{Type: "final_report", Payload: []byte(`{"state":"succeeded","summary":"done","branch":"reasonix/t_1",` +
		`"publish":"pr","pr":{"url":"https://github.com/acme/app/pull/12","number":12,"state":"open"}}`)}
	got := w.report(t.Context(), ev, false)
	if !strings.Contains(got, "PR #12 https://github.com/acme/app/pull/12") || strings.Contains(got, "branch reasonix/") {
		t.Errorf("report:\n%s", got)
	}
	ev.Payload = []byte(`{"state":"succeeded","summary":"done","branch":"reasonix/t_1"}`)
	if got := w.report(t.Context(), ev, false); !strings.Contains(got, "branch reasonix/t_1") || strings.Contains(got, "PR #") {
		t.Errorf("report without a PR:\n%s", got)
	}
}

// The final report lists the files the task declared with present, and
// the status message a two-level plan with its sub-steps indented.
func TestReportListsDeliverablesAndStatusShowsPhases(t *testing.T) {
	w := &watcher{r: &Relay{cfg: Config{MaxReportRunes: 2000}}, t: formatOnly{}, v: view{taskID: "t_1"}}
	ev := runner.Event{Type: "final_report", Payload: []byte(`{"state":"succeeded","summary":"done",` +
		`"deliverables":[{"path":"out/report.md","description":"the findings","bytes":42},{"path":"data.csv","bytes":7}]}`)}
	got := w.report(t.Context(), ev, false)
	for _, want := range []string{"Deliverables", "out/report.md", "— the findings", "data.csv"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	var v view
	v.apply(ev2("plan_updated", `{"plan":[{"content":"fix","status":"in_progress","steps":[{"content":"write the test","status":"completed"},{"content":"change parse","status":"in_progress"}]},{"content":"ship","status":"pending"}]}`))
	status := v.render(plainFormat{}, time.Now())
	for _, want := range []string{"▶ fix\n    ✔ write the test\n    ▶ change parse\n○ ship"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
}

func ev2(typ, payload string) store.Event { return store.Event{Type: typ, Payload: []byte(payload)} }
