package webhook

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"reasonix/config"
	"reasonix/runner"
)

// reviewSeeds are deliveries a forge sends and hostile variants of them:
// numbers as strings, fractions, negatives and huge values, nulls where
// objects go, a bot author, an issue comment that is no pull request's.
var reviewSeeds = []struct{ kind, event, body string }{
	{config.WebhookGitHub, "pull_request_review", `{"action":"submitted","repository":{"full_name":"acme/app"},"pull_request":{"number":3},"review":{"state":"CHANGES_REQUESTED","body":"fix it","user":{"login":"alice","type":"User"}}}`},
	{config.WebhookGitHub, "pull_request_review", `{"action":"submitted","pull_request":{"number":3.5},"review":{"user":{"login":"alice"}}}`},
	{config.WebhookGitHub, "pull_request_review", `{"action":"edited","pull_request":{"number":3},"review":{"user":{"login":"alice"}}}`},
	{config.WebhookGitHub, "pull_request_review_comment", `{"action":"created","pull_request":{"number":1e308},"comment":{"body":"x","user":{"login":"a"}}}`},
	{config.WebhookGitHub, "pull_request_review_comment", `{"action":"created","pull_request":{"number":2},"comment":{"body":"@bot </review-comment>","path":"a\nb","line":null,"original_line":-4,"diff_hunk":"@@","user":{"login":"bot[bot]","type":"Bot"}}}`},
	{config.WebhookGitHub, "issue_comment", `{"action":"created","issue":{"number":9,"pull_request":{"url":"x"}},"comment":{"body":"@bot","user":{"login":"alice"}}}`},
	{config.WebhookGitHub, "issue_comment", `{"action":"created","issue":{"number":9,"pull_request":null},"comment":{"body":"@bot","user":{"login":"alice"}}}`},
	{config.WebhookGitHub, "issue_comment", `{"action":"created","issue":{"number":"9"},"comment":{"body":"@bot","user":{"login":"alice"}}}`},
	{config.WebhookGitHub, "issues", `{"action":"labeled","repository":{"full_name":"acme/app"},"issue":{"number":7,"title":"t","body":"b"}}`},
	{config.WebhookGitHub, "issues", `{"action":"labeled","repository":{"full_name":["acme/app"]},"issue":{"number":-7}}`},
	{config.WebhookGitLab, "note", `{"object_kind":"note","project":{"path_with_namespace":"g/s/app"},"user":{"username":"alice"},"merge_request":{"iid":4},"object_attributes":{"noteable_type":"MergeRequest","note":"@bot","system":false,"position":{"new_path":"a.go","new_line":3}}}`},
	{config.WebhookGitLab, "note", `{"object_kind":"note","user":{"username":"alice"},"merge_request":{"iid":4},"object_attributes":{"noteable_type":"MergeRequest","note":"added 1 commit","system":true}}`},
	{config.WebhookGitLab, "note", `{"object_kind":"note","user":{"username":""},"merge_request":{"iid":4},"object_attributes":{"noteable_type":"Issue","note":"x"}}`},
	{config.WebhookGitLab, "issue", `{"object_kind":"issue","project":{"path_with_namespace":"g/app"},"object_attributes":{"iid":12,"title":"t"}}`},
	{config.WebhookGitLab, "issue", `{"object_kind":"issue","project":{"path_with_namespace":"` + strings.Repeat("g/", 150) + `"},"object_attributes":{"iid":12}}`},
	{config.WebhookHMAC, "note", `[]`},
	{config.WebhookGitHub, "issues", `null`},
}

// FuzzParseReview: whatever a verified delivery holds, a review it yields
// names a positive pull request, an author and its own forge, within the
// bounds; an issue origin names a positive number and a project that fit
// a task's origin (runner: 256 bytes a value).
func FuzzParseReview(f *testing.F) {
	for _, s := range reviewSeeds {
		f.Add(s.kind, s.event, s.body)
	}
	f.Fuzz(func(t *testing.T, kind, event, body string) {
		var payload any
		if json.Unmarshal([]byte(body), &payload) != nil {
			return
		}
		if r, ok := parseReview(kind, event, payload); ok {
			if r.PR <= 0 || r.Author == "" || r.Forge != kind || (kind != config.WebhookGitHub && kind != config.WebhookGitLab) {
				t.Fatalf("%s %s %s: review %+v", kind, event, body, r)
			}
			if len(r.Body) > maxReviewText || len(r.Hunk) > maxReviewText || len(r.Author) > maxReviewAttr ||
				len(r.Path) > maxReviewAttr || len(r.Project) > maxReviewAttr || len(r.State) > maxReviewAttr {
				t.Fatalf("%s %s: a field past its bound: %d %d %d", kind, event, len(r.Body), len(r.Hunk), len(r.Author))
			}
		}
		if o := issueOrigin(kind, event, payload); o != nil {
			n, err := strconv.Atoi(o[runner.OriginIssue])
			if err != nil || n <= 0 || o[runner.OriginIssueProject] == "" || o[runner.OriginIssueForge] != kind {
				t.Fatalf("%s %s %s: origin %v", kind, event, body, o)
			}
			for k, v := range o {
				if len(k) > 256 || len(v) > 256 {
					t.Fatalf("origin field %s is %d bytes", k, len(v))
				}
			}
		}
	})
}

// The hostile seeds are refused or read as the forges mean them.
func TestParseReviewSeeds(t *testing.T) {
	parse := func(i int) (runner.Review, bool) {
		var p any
		if err := json.Unmarshal([]byte(reviewSeeds[i].body), &p); err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		return parseReview(reviewSeeds[i].kind, reviewSeeds[i].event, p)
	}
	for i, want := range []bool{true, false, false, false, true, true, false, false, false, false, true, true, false, false, false, false, false} {
		if _, ok := parse(i); ok != want {
			t.Errorf("seed %d (%s %s): ok = %v, want %v", i, reviewSeeds[i].kind, reviewSeeds[i].event, ok, want)
		}
	}
	if r, _ := parse(0); r.State != "changes_requested" || r.Project != "acme/app" || r.PR != 3 || r.Kind != "review" {
		t.Errorf("review = %+v", r)
	}
	if r, _ := parse(4); !r.AuthorIsBot || r.Line != 0 || r.Path != "a\nb" {
		t.Errorf("bot comment = %+v", r)
	}
	if r, _ := parse(10); r.Path != "a.go" || r.Line != 3 || r.Project != "g/s/app" || r.AuthorIsBot {
		t.Errorf("note = %+v", r)
	}
	if r, _ := parse(11); !r.AuthorIsBot {
		t.Errorf("a system note is not marked the bot's: %+v", r)
	}
	for i, want := range map[int]string{8: "7", 9: "", 13: "12", 14: ""} {
		var p any
		_ = json.Unmarshal([]byte(reviewSeeds[i].body), &p)
		if got := issueOrigin(reviewSeeds[i].kind, reviewSeeds[i].event, p)[runner.OriginIssue]; got != want {
			t.Errorf("seed %d: origin issue %q, want %q", i, got, want)
		}
	}
}
