package bot

import (
	"strings"
	"testing"

	"reasonix/runner"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Command
	}{
		{"fix the flaky test", Command{Verb: VerbTask, Text: "fix the flaky test"}},
		{"goal make CI green", Command{Verb: VerbGoal, Text: "make CI green"}},
		{"/goal@reasonix_bot make CI green", Command{Verb: VerbGoal, Text: "make CI green"}},
		{"in:api plan split the handler", Command{Verb: VerbPlan, Text: "split the handler", Workspace: "api"}},
		{"plan in:api split it", Command{Verb: VerbPlan, Text: "split it", Workspace: "api"}},
		{"status t_123", Command{Verb: VerbStatus, Text: "t_123"}},
		{"cancel", Command{Verb: VerbCancel}},
		{"Tasks", Command{Verb: VerbTasks}},
		{"goal", Command{Verb: VerbHelp}},
		{"", Command{Verb: VerbHelp}},
		{"/start", Command{Verb: VerbHelp}},
		{"please goal this", Command{Verb: VerbTask, Text: "please goal this"}},
		{"in: fix", Command{Verb: VerbTask, Text: "in: fix"}},
	} {
		if got := ParseCommand(tc.in); got != tc.want {
			t.Errorf("ParseCommand(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"goal x", "in:a plan b", "/status@bot t_1", "in:", "\x00", "cancel in:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseCommand(s)
		if c.Verb == "" {
			t.Fatal("empty verb")
		}
		if (c.Verb == VerbTask || c.Verb == VerbGoal || c.Verb == VerbPlan) && c.Text == "" {
			t.Fatalf("%q: a %s without text", s, c.Verb)
		}
	})
}

func TestApprovalButtonRoundTrip(t *testing.T) {
	id := "a_01JABCDEFGHJKMNPQRSTVWXYZ0"
	for _, choice := range []runner.Choice{runner.AllowOnce, runner.AllowTask, runner.AllowAlways, runner.Deny} {
		data := ApprovalButton(id, choice)
		if len(data) > maxButtonData {
			t.Errorf("%q is longer than Telegram's 64 bytes", data)
		}
		gotID, gotChoice, err := ParseApprovalButton(data)
		if err != nil || gotID != id || gotChoice != choice {
			t.Errorf("parse(%q) = %q %q %v", data, gotID, gotChoice, err)
		}
	}
	for _, bad := range []string{"", "ap:", "ap:a_1:x", "ap:a_1", "xx:a_123:o", "ap:a 1:o", "ap:../x:o", "ap:" + string(make([]byte, 70)) + ":o"} {
		if _, _, err := ParseApprovalButton(bad); err == nil {
			t.Errorf("ParseApprovalButton(%q) accepted", bad)
		}
	}
}

func FuzzParseApprovalButton(f *testing.F) {
	f.Add("ap:a_01JABCDEFGHJKMNPQRSTVWXYZ0:o")
	f.Add("ap:x:t")
	f.Add("ap::d")
	f.Add("ap:a_01JABCDEFGHJKMNPQRSTVWXYZ0:a")
	f.Add("ap:a_01JABCDEFGHJKMNPQRSTVWXYZ0:A")
	f.Fuzz(func(t *testing.T, s string) {
		id, choice, err := ParseApprovalButton(s)
		if err != nil {
			return
		}
		// Whatever parses must be exactly what we would have produced.
		if ApprovalButton(id, choice) != s {
			t.Fatalf("%q parsed to %q %q, which renders differently", s, id, choice)
		}
	})
}

func TestSplitAndTail(t *testing.T) {
	long := ""
	for i := range 50 {
		long += "line " + string(rune('a'+i%26)) + " ünïcode\n"
	}
	parts := Split(long, 100)
	joined := ""
	for _, p := range parts {
		if n := len([]rune(p)); n > 100 {
			t.Errorf("a part has %d runes", n)
		}
		joined += p
	}
	if joined != long || len(parts) < 5 {
		t.Errorf("split lost text or did not split: %d parts", len(parts))
	}
	if got := Tail("abcdef", 4); got != "…def" {
		t.Errorf("Tail = %q", got)
	}
}

func TestSplitKeepsEntitiesWhole(t *testing.T) {
	text := ""
	for range 100 {
		text += "a&amp;"
	}
	for _, p := range Split(text, 37) {
		if i := strings.LastIndexByte(p, '&'); i >= 0 && !strings.Contains(p[i:], ";") {
			t.Fatalf("part %q ends inside an entity", p)
		}
	}
}
