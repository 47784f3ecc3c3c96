package relay_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"reasonix/bot/relay"
)

// syncBuffer is a log sink safe for the relay's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDroppedMessagesAreLogged: a mention the bot does not act on — in a
// channel not allowed, from a user not allowed, a DM from a stranger — is
// logged at info with the reason (it used to vanish without a trace).
func TestDroppedMessagesAreLogged(t *testing.T) {
	var logs syncBuffer
	r := newRigOpts(t, rigOpts{tune: func(c *relay.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}})
	r.slack.Mention(alice, "C0NOTALLOWED", "", "fix it")
	r.slack.Mention(eve, channel, "", "fix it too")
	r.slack.DM(eve, "D0EVE", "and this")
	for _, want := range []string{
		`msg="relay: dropped a message" reason="the channel is not in the allow list" transport=slack channel=C0NOTALLOWED user=` + alice,
		`reason="the user is not in the allow list" transport=slack channel=` + channel + ` user=` + eve,
		`reason="direct messages are taken only from users in the allow list" transport=slack channel=D0EVE user=` + eve,
	} {
		eventually(t, "the log line "+want, func() bool { return strings.Contains(logs.String(), want) })
	}
	if strings.Contains(logs.String(), "fix it") {
		t.Error("a dropped message's text was logged")
	}
}
