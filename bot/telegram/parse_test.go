package telegram

import (
	"errors"
	"strings"
	"testing"
)

var self = me{ID: 999, Username: "reasonix_bot"}

func TestParseUpdate(t *testing.T) {
	for _, tc := range []struct {
		name, raw     string
		addressed, dm bool
		text, thread  string
		ignored       bool
	}{
		{name: "dm", raw: `{"update_id":1,"message":{"message_id":5,"from":{"id":11},"chat":{"id":11,"type":"private"},"text":"fix it"}}`, addressed: true, dm: true, text: "fix it"},
		{name: "group mention", raw: `{"update_id":2,"message":{"message_id":6,"from":{"id":11},"chat":{"id":-100,"type":"supergroup"},"text":"@reasonix_bot fix it","entities":[{"type":"mention","offset":0,"length":13}]}}`, addressed: true, text: "fix it"},
		{name: "group command", raw: `{"update_id":3,"message":{"message_id":7,"from":{"id":11},"chat":{"id":-100,"type":"supergroup"},"text":"/goal@reasonix_bot ship","entities":[{"type":"bot_command","offset":0,"length":18}]}}`, addressed: true, text: "/goal ship"},
		{name: "other bot's command", raw: `{"update_id":4,"message":{"message_id":8,"from":{"id":11},"chat":{"id":-100,"type":"supergroup"},"text":"/goal@other_bot ship","entities":[{"type":"bot_command","offset":0,"length":15}]}}`, text: "/goal@other_bot ship"},
		{name: "reply to the bot", raw: `{"update_id":5,"message":{"message_id":9,"from":{"id":11},"chat":{"id":-100,"type":"supergroup"},"text":"and this","reply_to_message":{"message_id":1001,"from":{"id":999,"is_bot":true}}}}`, addressed: true, text: "and this", thread: "1001"},
		{name: "emoji before mention", raw: `{"update_id":6,"message":{"message_id":10,"from":{"id":11},"chat":{"id":-100,"type":"group"},"text":"😀 @reasonix_bot hi","entities":[{"type":"mention","offset":3,"length":13}]}}`, addressed: true, text: "😀  hi"},
		{name: "from a bot", raw: `{"update_id":7,"message":{"message_id":11,"from":{"id":12,"is_bot":true},"chat":{"id":11,"type":"private"},"text":"x"}}`, ignored: true},
		{name: "no text", raw: `{"update_id":8,"message":{"message_id":12,"from":{"id":11},"chat":{"id":11,"type":"private"}}}`, ignored: true},
	} {
		p, err := parseUpdate([]byte(tc.raw), self)
		if tc.ignored {
			if !errors.Is(err, errIgnored) {
				t.Errorf("%s: err = %v, want ignored", tc.name, err)
			}
			continue
		}
		if err != nil || p.In == nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if p.In.Addressed != tc.addressed || p.In.DM != tc.dm || p.In.Text != tc.text || p.In.Thread != tc.thread {
			t.Errorf("%s: %+v", tc.name, *p.In)
		}
	}
	p, err := parseUpdate([]byte(`{"update_id":9,"callback_query":{"id":"cb1","from":{"id":22},"message":{"message_id":1002,"chat":{"id":-100}},"data":"ap:a_1:o"}}`), self)
	if err != nil || p.Click == nil || p.Click.User != "22" || p.Click.Channel != "-100" || p.Click.MessageID != "1002" || p.CallbackID != "cb1" || p.Click.Requester() != "telegram:22" {
		t.Errorf("callback = %+v %v", p, err)
	}
}

func TestFormatEscapesHTML(t *testing.T) {
	if got := (format{}).Escape(`<b>"x" & y</b>`); got != "&lt;b&gt;&quot;x&quot; &amp; y&lt;/b&gt;" {
		t.Errorf("escaped = %q", got)
	}
}

func FuzzParseUpdate(f *testing.F) {
	f.Add([]byte(`{"update_id":2,"message":{"message_id":6,"from":{"id":11},"chat":{"id":-100,"type":"supergroup"},"text":"@reasonix_bot fix it","entities":[{"type":"mention","offset":0,"length":13}]}}`))
	f.Add([]byte(`{"update_id":9,"callback_query":{"id":"cb1","from":{"id":22},"message":{"message_id":1002,"chat":{"id":-100}},"data":"ap:a_1:o"}}`))
	f.Add([]byte(`{"message":{"message_id":1,"from":{"id":1},"chat":{"id":1},"text":"x","entities":[{"type":"mention","offset":-5,"length":99}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseUpdate(data, self)
		if err != nil {
			return
		}
		if p.In != nil && (p.In.User == "" || p.In.Channel == "" || p.In.MessageID == "" || strings.Contains(p.In.Text, "@reasonix_bot")) && p.In.Addressed {
			t.Fatalf("accepted %+v", *p.In)
		}
		if p.Click != nil && (p.CallbackID == "" || p.Click.User == "" || p.Click.Channel == "") {
			t.Fatalf("accepted click %+v", *p.Click)
		}
	})
}

func TestMentionLinksOnlyNumericIDs(t *testing.T) {
	if got := (format{}).Mention("222", "Bob <b>"); got != `<a href="tg://user?id=222">Bob &lt;b&gt;</a>` {
		t.Errorf("mention = %q", got)
	}
	if got := (format{}).Mention(`1"><b>`, "Eve"); got != "Eve" {
		t.Errorf("a forged id links: %q", got)
	}
}
