package relay_test

import (
	"strings"
	"testing"
	"time"

	"reasonix/bot/relay"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// With [serve] public_url the status message, the approval request and
// the report link to the task; without it (every other test) none does.
func TestMessagesLinkToTheTask(t *testing.T) {
	r := newRigOpts(t, rigOpts{model: approvalScript, editInterval: 120 * time.Millisecond,
		tune: func(c *relay.Config) { c.PublicURL = "https://reasonix.example" }})
	m := r.slack.Mention(alice, channel, "", "link me")
	ap := r.approvalMessage(t, m.TS)
	id := r.taskOf(t, m.TS)
	link := "https://reasonix.example/tasks/" + id
	if !strings.Contains(ap.Text, link) {
		t.Errorf("the approval lacks %s:\n%s", link, ap.Text)
	}
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed)
	eventually(t, "the report", func() bool { return strings.Contains(r.threadText(m.TS), "finished: ran") })
	eventually(t, "the final status", func() bool {
		return strings.Contains(r.slack.Thread(channel, m.TS)[0].Text, "— done")
	})
	for _, msg := range r.slack.Thread(channel, m.TS) {
		if (msg.TS == m.TS || strings.Contains(msg.Text, "finished: ran") || strings.Contains(msg.Text, "— done")) && !strings.Contains(msg.Text, link) {
			t.Errorf("a message lacks the link:\n%s", msg.Text)
		}
	}
}
