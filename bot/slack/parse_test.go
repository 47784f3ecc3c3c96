package slack

import (
	"errors"
	"strings"
	"testing"
)

func TestParseEvent(t *testing.T) {
	mention := `{"team_id":"T1","event_id":"Ev1","event":{"type":"app_mention","user":"U1","text":"<@UBOT> fix &lt;this&gt; &amp; that","channel":"C1","ts":"1.1"}}`
	in, err := parseEvent([]byte(mention), "UBOT")
	if err != nil {
		t.Fatal(err)
	}
	if in.Text != "fix <this> & that" || !in.Addressed || in.Thread != "" || in.Home() != "1.1" || in.Requester() != "slack:T1/U1" || in.EventID != "Ev1" {
		t.Errorf("mention = %+v", in)
	}
	inThread := `{"team_id":"T1","event_id":"Ev2","event":{"type":"app_mention","user":"U1","text":"<@UBOT> go","channel":"C1","ts":"1.5","thread_ts":"1.1"}}`
	if in, _ := parseEvent([]byte(inThread), "UBOT"); in.Thread != "1.1" || in.Home() != "1.1" {
		t.Errorf("mention in a thread = %+v", in)
	}
	reply := `{"team_id":"T1","event_id":"Ev3","event":{"type":"message","user":"U1","text":"also do x","channel":"C1","ts":"1.6","thread_ts":"1.1","channel_type":"channel"}}`
	if in, err := parseEvent([]byte(reply), "UBOT"); err != nil || in.Addressed || in.Thread != "1.1" {
		t.Errorf("thread reply = %+v, %v", in, err)
	}
	dm := `{"team_id":"T1","event_id":"Ev4","event":{"type":"message","user":"U1","text":"hi","channel":"D1","ts":"1.7","channel_type":"im"}}`
	if in, err := parseEvent([]byte(dm), "UBOT"); err != nil || !in.Addressed || !in.DM {
		t.Errorf("dm = %+v, %v", in, err)
	}
	for name, p := range map[string]string{
		"own message":        `{"event_id":"E","event":{"type":"message","user":"UBOT","text":"x","channel":"C1","ts":"1","channel_type":"im"}}`,
		"bot message":        `{"event_id":"E","event":{"type":"message","bot_id":"B1","user":"U1","text":"x","channel":"C1","ts":"1","channel_type":"im"}}`,
		"edit":               `{"event_id":"E","event":{"type":"message","subtype":"message_changed","channel":"C1","ts":"1"}}`,
		"channel chatter":    `{"event_id":"E","event":{"type":"message","user":"U1","text":"x","channel":"C1","ts":"1","channel_type":"channel"}}`,
		"mention as message": `{"event_id":"E","event":{"type":"message","user":"U1","text":"<@UBOT> x","channel":"C1","ts":"1","thread_ts":"0.5","channel_type":"channel"}}`,
		"reaction":           `{"event_id":"E","event":{"type":"reaction_added","user":"U1","channel":"C1","ts":"1"}}`,
	} {
		if _, err := parseEvent([]byte(p), "UBOT"); !errors.Is(err, errIgnored) {
			t.Errorf("%s: err = %v, want ignored", name, err)
		}
	}
	for _, p := range []string{`{}`, `[]`, `{"event_id":"E","event":{"type":"app_mention","user":"U1"}}`, `not json`} {
		if _, err := parseEvent([]byte(p), "UBOT"); err == nil {
			t.Errorf("%s parsed", p)
		}
	}
}

func TestParseInteractionAndSlash(t *testing.T) {
	click := `{"type":"block_actions","team":{"id":"T1"},"user":{"id":"U2"},"channel":{"id":"C1"},"trigger_id":"tr","container":{"message_ts":"1.2","channel_id":"C1"},"actions":[{"action_id":"reasonix_0","value":"ap:a_1:o"}]}`
	c, err := parseInteraction([]byte(click))
	if err != nil || c.User != "U2" || c.Channel != "C1" || c.MessageID != "1.2" || c.Data != "ap:a_1:o" || c.Requester() != "slack:T1/U2" {
		t.Errorf("click = %+v, %v", c, err)
	}
	if _, err := parseInteraction([]byte(`{"type":"view_submission"}`)); !errors.Is(err, errIgnored) {
		t.Errorf("a modal: %v", err)
	}
	if _, err := parseInteraction([]byte(`{"type":"block_actions","actions":[{"value":"x"}]}`)); err == nil {
		t.Error("a click without user, channel or message parsed")
	}
	slash := `{"command":"/reasonix","text":" goal ship it ","user_id":"U1","channel_id":"C1","team_id":"T1","trigger_id":"t9"}`
	in, err := parseSlash([]byte(slash), "/reasonix")
	if err != nil || in.Text != "goal ship it" || in.EventID != "cmd:t9" || !in.Addressed {
		t.Errorf("slash = %+v, %v", in, err)
	}
	// Another app's command (or a forged one) is no request to this bot.
	if _, err := parseSlash([]byte(strings.Replace(slash, "/reasonix", "/deploy", 1)), "/reasonix"); !errors.Is(err, errIgnored) {
		t.Errorf("another command: %v", err)
	}
	if _, err := parseSlash([]byte(slash), "/rx"); !errors.Is(err, errIgnored) {
		t.Errorf("the default command under another configured one: %v", err)
	}
}

func TestFormatNeverPings(t *testing.T) {
	got := format{}.Escape("<!channel> <!here> <@U123> <https://x|y> a & b")
	if strings.ContainsAny(got, "<>") || !strings.Contains(got, "&lt;!channel&gt;") || !strings.Contains(got, "a &amp; b") {
		t.Errorf("escaped = %q", got)
	}
}

func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"team_id":"T1","event_id":"Ev1","event":{"type":"app_mention","user":"U1","text":"<@UBOT> x","channel":"C1","ts":"1.1"}}`))
	f.Add([]byte(`{"event_id":"E","event":{"type":"message","user":"U1","text":"x","channel":"D1","ts":"1","channel_type":"im"}}`))
	f.Add([]byte(`{"event":{"text":"<@UBOT|bot>"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := parseEvent(data, "UBOT")
		if err != nil {
			return
		}
		if in.EventID == "" || in.Channel == "" || in.User == "" || in.User == "UBOT" || in.MessageID == "" {
			t.Fatalf("accepted an incomplete event: %+v", in)
		}
		if strings.Contains(in.Text, "<@UBOT>") {
			t.Fatalf("the mention survived: %q", in.Text)
		}
	})
}

func FuzzParseInteraction(f *testing.F) {
	f.Add([]byte(`{"type":"block_actions","team":{"id":"T1"},"user":{"id":"U2"},"channel":{"id":"C1"},"container":{"message_ts":"1.2"},"actions":[{"value":"ap:a_1:o"}]}`))
	f.Add([]byte(`{"type":"block_actions","actions":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseInteraction(data)
		if err == nil && (c.User == "" || c.Channel == "" || c.MessageID == "") {
			t.Fatalf("accepted an incomplete click: %+v", c)
		}
		in, err := parseSlash(data, "/reasonix")
		if err == nil && (in.User == "" || in.Channel == "" || !strings.HasPrefix(in.EventID, "cmd:")) {
			t.Fatalf("accepted an incomplete command: %+v", in)
		}
	})
}
