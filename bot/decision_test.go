package bot

import (
	"strings"
	"testing"

	"reasonix/runner"
)

func TestParseDecision(t *testing.T) {
	id := "a_01jabcdefghjkmnpqrstvwxyz0"
	for _, tc := range []struct {
		in, id string
		choice runner.Choice
	}{
		{"approve " + id, id, runner.AllowOnce},
		{"Approve " + id + " once", id, runner.AllowOnce},
		{"/allow@reasonix_bot " + id + " task", id, runner.AllowTask},
		{"approve " + id + " Always", id, runner.AllowAlways},
		{"  deny   " + id + "  ", id, runner.Deny},
		{"deny " + strings.ToUpper(id), id, runner.Deny},
		{"approve a_01jab", "a_01jab", runner.AllowOnce},      // a prefix, as the CLI takes
		{"deny 01JABCD", "a_01jabcd", runner.Deny},            // without its a_
		{"approve 01jabc task", "a_01jabc", runner.AllowTask}, // the shortest prefix
	} {
		gotID, choice, ok := ParseDecision(tc.in)
		if !ok || gotID != tc.id || choice != tc.choice {
			t.Errorf("ParseDecision(%q) = %q %q %v", tc.in, gotID, choice, ok)
		}
	}
	for _, bad := range []string{"", "approve", "approve t_123", "deny " + id + " task", "deny " + id + " always", "approve " + id + " forever",
		"approve " + id + " task now", "please approve " + id, "approve ../" + id, "approve a_x", "approve a_" + strings.Repeat("x", 60),
		"approve a_01j", "approve 01j", "allow tests", "deny this", "approve deps task", "approve a_01jabcdefghjkmnpqrstvwxyz01"} {
		if _, _, ok := ParseDecision(bad); ok {
			t.Errorf("ParseDecision(%q) accepted", bad)
		}
	}
}

func FuzzParseDecision(f *testing.F) {
	for _, s := range []string{"approve a_01jabcdefghjkmnpqrstvwxyz0", "deny A_01JABCDEFGHJKMNPQRSTVWXYZ0", "/allow@bot a_01jabcdefghjkmnpqrstvwxyz0 task", "approve a_1 once", "deny\u00a0a_123",
		"approve 01jab", "deny a_01jabc", "allow tests", "approve 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, choice, ok := ParseDecision(s)
		if !ok {
			return
		}
		// What parses names an approval id the runner could have made and
		// one of the three choices; the words said are in the text.
		if !isApprovalRef(id) || !strings.Contains(strings.ToLower(s), strings.TrimPrefix(id, "a_")) {
			t.Fatalf("%q gave id %q", s, id)
		}
		switch choice {
		case runner.AllowOnce, runner.AllowTask, runner.AllowAlways, runner.Deny:
		default:
			t.Fatalf("%q gave choice %q", s, choice)
		}
		// And it reads the same when said again in canonical form.
		canon := map[runner.Choice]string{runner.AllowOnce: "approve " + id, runner.AllowTask: "approve " + id + " task",
			runner.AllowAlways: "approve " + id + " always", runner.Deny: "deny " + id}[choice]
		if id2, c2, ok2 := ParseDecision(canon); !ok2 || id2 != id || c2 != choice {
			t.Fatalf("canonical %q of %q reads as %q %q %v", canon, s, id2, c2, ok2)
		}
	})
}
