package slack

import (
	"context"
	"testing"

	"reasonix/bot/bottest"
)

// A second reaction to the same message (a redelivery whose first
// acknowledgement was not recorded) is the acknowledgement already given:
// React reports success and Slack keeps one reaction. Any other refusal
// is an error, so the relay falls back to a text acknowledgement.
func TestReactAgainIsAcknowledged(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{PerSecond: 100, Burst: 100})
	tr, err := New(Config{BotToken: "xoxb-1", SigningSecret: "shh", APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 2 {
		if err := tr.React(ctx, "C1", "1700000000.000100"); err != nil {
			t.Fatalf("reaction %d: %v", i+1, err)
		}
	}
	if got := fake.Reactions(); len(got) != 1 {
		t.Fatalf("reactions = %v, want one", got)
	}
	bad, err := New(Config{BotToken: "xoxb-1", SigningSecret: "shh", APIURL: fake.APIURL() + "missing/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.React(ctx, "C1", "1700000000.000200"); err == nil {
		t.Fatal("a failed reaction reported success")
	}
}
