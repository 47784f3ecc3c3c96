package relay_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"reasonix/bot/relay"
)

var elapsedRE = regexp.MustCompile(`elapsed (\d+)s`)

// A task that waits logs nothing, yet its status message keeps its elapsed
// time moving, paced like every other edit.
func TestElapsedTimeIsRefreshed(t *testing.T) {
	r := newRigOpts(t, rigOpts{model: approvalScript, editInterval: 120 * time.Millisecond,
		tune: func(c *relay.Config) { c.RefreshInterval = 300 * time.Millisecond }})
	m := r.slack.Mention(alice, channel, "", "wait and watch the clock")
	r.approvalMessage(t, m.TS)
	elapsed := func() (int, int) {
		msgs := r.slack.Thread(channel, m.TS)
		if len(msgs) == 0 {
			return -1, 0
		}
		sm := elapsedRE.FindStringSubmatch(msgs[0].Text)
		if sm == nil {
			return -1, msgs[0].Edits
		}
		n, _ := strconv.Atoi(sm[1])
		return n, msgs[0].Edits
	}
	eventually(t, "the elapsed time to reach 3s", func() bool { n, _ := elapsed(); return n >= 3 })
	_, edits := elapsed()
	// About one edit per refresh (plus the task's own), not one per
	// change of the rendered second alone.
	if edits > 20 {
		t.Errorf("%d edits in ~3s with a 300ms refresh", edits)
	}
	if v := r.slack.Violations(); v != 0 {
		t.Errorf("%d limit violations", v)
	}
}
