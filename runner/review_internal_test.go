package runner

import "testing"

// A mention is @login as a whole name, in any letter case; a longer name
// that starts with it is someone else.
func TestMentions(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"@reasonix-bot please fix", true},
		{"thanks @Reasonix-Bot.", true},
		{"(@reasonix-bot)", true},
		{"@reasonix-bot", true},
		{"@reasonix-botany is someone else", false},
		{"@reasonix-bot-2 too", false},
		{"@reasonix-bot_x too", false},
		{"reasonix-bot without an at", false},
		{"@reasonix-bots @reasonix-bot", true},
		{"", false},
	} {
		if got := mentions(c.text, "reasonix-bot"); got != c.want {
			t.Errorf("mentions(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	if mentions("@ anything", "") {
		t.Error("an unknown bot login is mentioned")
	}
}

// A review that requests changes asks the bot without naming it; one that
// approves or comments must name it.
func TestReviewAsks(t *testing.T) {
	if !reviewAsks(Review{Kind: "review", State: "changes_requested"}, "bot") {
		t.Error("changes requested does not ask")
	}
	if reviewAsks(Review{Kind: "review", State: "approved", Body: "lgtm"}, "bot") {
		t.Error("an approval without a mention asks")
	}
	if reviewAsks(Review{Kind: "comment", State: "changes_requested", Body: "x"}, "bot") {
		t.Error("a comment's state is not a review's")
	}
}
