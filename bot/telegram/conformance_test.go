package telegram

import (
	"strconv"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// pollHarness is the fake Telegram's side of the conformance suite: long
// polling, a private chat with the bot, and the offset as acknowledgement.
type pollHarness struct {
	fake *bottest.Telegram
}

const suiteChat = 77

func (pollHarness) Channel() string { return strconv.Itoa(suiteChat) }

func (h pollHarness) Send(text string) { h.fake.Send(suiteChat, suiteChat, text, 0) }

func (h pollHarness) Acked(eventID string) bool {
	id, err := strconv.ParseInt(eventID, 10, 64)
	return err == nil && h.fake.Confirmed() > id
}

func (h pollHarness) Text(id string) (string, bool) {
	for _, m := range h.fake.Messages(suiteChat) {
		if strconv.FormatInt(m.ID, 10) == id {
			return m.Text, true
		}
	}
	return "", false
}

func (h pollHarness) Click(id, data string) {
	n, _ := strconv.ParseInt(id, 10, 64)
	h.fake.Click(suiteChat, suiteChat, n, data)
}

func (h pollHarness) Answers() []string {
	var out []string
	for _, a := range h.fake.Answers() {
		out = append(out, a.Text)
	}
	return out
}

func TestTransportConformance(t *testing.T) {
	bottest.TestTransport(t, bottest.Platform{New: func(t *testing.T) (bot.Transport, bottest.Harness) {
		fake := bottest.NewTelegram(t, "7:suite", bottest.SlackLimits{})
		tr, err := New(Config{Token: "7:suite", APIEndpoint: fake.Endpoint(), Cursor: storetest.SQLite(t, store.Config{}), PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return tr, pollHarness{fake: fake}
	}})
}
