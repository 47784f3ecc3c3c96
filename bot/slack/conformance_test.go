package slack

import (
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/internal/eventually"
)

// slackHarness is the fake Slack's side of the conformance suite: Socket
// Mode, a channel the bot is in, and Slack's redelivery of what is not
// acknowledged.
type slackHarness struct {
	t    *testing.T
	fake *bottest.Slack
}

const suiteChannel, suiteUser = "C0SUITE", "USUITE"

func (slackHarness) Channel() string { return suiteChannel }

// Send waits for the transport's connection first: the fake's redelivery
// clock starts when it sends, and Slack's starts once it has sent.
func (h slackHarness) Send(text string) {
	eventually.True(h.t, 10*time.Second, func() bool { open, _ := h.fake.Connected(); return open > 0 }, "a Socket Mode connection")
	h.fake.Mention(suiteUser, suiteChannel, "", text)
}

func (h slackHarness) Acked(eventID string) bool {
	_, acked := h.fake.Envelopes(eventID)
	return acked > 0
}

func (h slackHarness) Text(id string) (string, bool) {
	for _, m := range h.fake.Messages() {
		if m.Channel == suiteChannel && m.TS == id {
			return m.Text, true
		}
	}
	return "", false
}

func (h slackHarness) Click(id, data string) { h.fake.Click(suiteUser, suiteChannel, id, data) }

func (h slackHarness) Answers() []string {
	var out []string
	for _, e := range h.fake.Ephemerals() {
		if e.User == suiteUser {
			out = append(out, e.Text)
		}
	}
	return out
}

func TestTransportConformance(t *testing.T) {
	bottest.TestTransport(t, bottest.Platform{New: func(t *testing.T) (bot.Transport, bottest.Harness) {
		fake := bottest.NewSlack(t, bottest.SlackLimits{})
		fake.RetryUnacked(100*time.Millisecond, 200*time.Millisecond, 400*time.Millisecond)
		tr, err := New(Config{BotToken: "xoxb-1", AppToken: "xapp-1", APIURL: fake.APIURL()})
		if err != nil {
			t.Fatal(err)
		}
		return tr, slackHarness{t: t, fake: fake}
	}})
}
