package relay

import (
	"strings"
	"testing"

	"reasonix/bot"
	"reasonix/runner"
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
