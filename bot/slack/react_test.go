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

// Conclude swaps the acknowledgement for the outcome, and again for a
// continued task whose outcome changed; a repeat is no failure.
func TestConcludeSwapsTheReaction(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{PerSecond: 100, Burst: 100})
	tr, err := New(Config{BotToken: "xoxb-1", SigningSecret: "shh", APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const ts = "1700000000.000300"
	if err := tr.React(ctx, "C1", ts); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := tr.Conclude(ctx, "C1", ts, false); err != nil {
			t.Fatal(err)
		}
	}
	if got := fake.Reactions(); len(got) != 1 || got[0] != "C1/"+ts+"/x" {
		t.Fatalf("after a failure, reactions = %v, want x alone", got)
	}
	if err := tr.Conclude(ctx, "C1", ts, true); err != nil {
		t.Fatal(err)
	}
	if got := fake.Reactions(); len(got) != 1 || got[0] != "C1/"+ts+"/white_check_mark" {
		t.Fatalf("after a success, reactions = %v, want white_check_mark alone", got)
	}
}

// UserName prefers the display name a person chose, then the real name.
func TestUserName(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	tr, err := New(Config{BotToken: "xoxb-1", SigningSecret: "shh", APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	fake.SetUser("UANN", "annie", "Ann Smith")
	ctx := context.Background()
	for user, want := range map[string]string{"UANN": "annie", "UBOB": "Bob"} {
		if got, err := tr.UserName(ctx, "T0FAKE", user); err != nil || got != want {
			t.Errorf("UserName(%s) = %q, %v; want %q", user, got, err, want)
		}
	}
	if _, err := tr.UserName(ctx, "T0FAKE", "UNOBODY"); err == nil {
		t.Error("an unknown user has a name")
	}
	if got := (format{}).Mention("UANN", "annie"); got != "<@UANN>" {
		t.Errorf("mention = %q", got)
	}
	if got := (format{}).Mention("<!channel>", "x <y>"); got != "x &lt;y&gt;" {
		t.Errorf("a forged id mentions: %q", got)
	}
}
