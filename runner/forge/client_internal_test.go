package forge

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNextLink(t *testing.T) {
	for in, want := range map[string]string{
		`<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"`: "https://api.github.com/x?page=2",
		`<https://g/x?page=1>; rel="prev", <https://g/x?page=3>; rel="next"`:                           "https://g/x?page=3",
		`<https://g/x?page=3>; rel="last"`:                                                             "",
		`<https://g/x?page=3>; rel="prev next"`:                                                        "https://g/x?page=3",
		`https://g/x; rel="next"`:                                                                      "",
		``:                                                                                             "",
	} {
		if got := nextLink([]string{in}); got != want {
			t.Errorf("nextLink(%q) = %q, want %q", in, got, want)
		}
	}
}

// Link is a header from the forge, untrusted: parsing it never panics and
// what it returns came from between angle brackets.
func FuzzNextLink(f *testing.F) {
	f.Add(`<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"`)
	f.Add(`<>; rel=next`)
	f.Add(`<a;b>; rel="next"; x`)
	f.Fuzz(func(t *testing.T, v string) {
		got := nextLink([]string{v})
		if got != "" && !strings.Contains(v, "<"+got+">") {
			t.Errorf("nextLink(%q) = %q, not a bracketed target", v, got)
		}
	})
}

func TestErrorMessage(t *testing.T) {
	for in, want := range map[string]string{
		`{"message":"Validation Failed","errors":[{"message":"A pull request already exists for a:b.","code":"custom"}]}`: "Validation Failed; A pull request already exists for a:b. custom",
		`{"message":["Another open merge request already exists for this source branch: !1"]}`:                            `["Another open merge request already exists for this source branch: !1"]`,
		`{"message":{"title":["can't be blank"]}}`:                                                                        `{"title":["can't be blank"]}`,
		`{"error":"invalid_token","error_description":"Token was revoked."}`:                                              "invalid_token; Token was revoked.",
		`plain text failure`:       "plain text failure",
		`<html>bad gateway</html>`: "",
	} {
		if got := errorMessage([]byte(in)); got != want {
			t.Errorf("errorMessage(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"30"}}, 30 * time.Second},
		{http.Header{"Retry-After": {now.Add(time.Minute).UTC().Format(http.TimeFormat)}}, time.Minute},
		{http.Header{"X-Ratelimit-Reset": {"1700000090"}}, 90 * time.Second},
		{http.Header{"Ratelimit-Reset": {"1700000010"}}, 10 * time.Second},
		{http.Header{"Retry-After": {"-5"}}, 0},
		{http.Header{"Retry-After": {"999999"}}, time.Hour},
		{http.Header{}, 0},
	} {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestTailStringStartsOnACharacter(t *testing.T) {
	got := tailString("ab€€", 4) // € is three bytes: the cut lands inside one
	if got != "€" {
		t.Errorf("tailString = %q, want %q", got, "€")
	}
	if n := len(tailString(strings.Repeat("x", 2*MaxLogBytes), 1<<40)); n != MaxLogBytes {
		t.Errorf("a huge bound kept %d bytes, want MaxLogBytes", n)
	}
}

// GitLab's merge statuses, new and old: only a conflict counts against a
// request, and what GitLab is still computing is unknown.
func TestGitLabMergeable(t *testing.T) {
	for _, c := range []struct {
		m    glMR
		want Mergeable
	}{
		{glMR{DetailedMergeStatus: "mergeable", MergeStatus: "can_be_merged"}, MergeClean},
		{glMR{DetailedMergeStatus: "conflict", MergeStatus: "cannot_be_merged", HasConflicts: true}, MergeConflict},
		{glMR{DetailedMergeStatus: "checking", MergeStatus: "checking"}, MergeUnknown},
		{glMR{DetailedMergeStatus: "unchecked", MergeStatus: "unchecked"}, MergeUnknown},
		{glMR{DetailedMergeStatus: "ci_must_pass", MergeStatus: "can_be_merged"}, MergeClean},
		{glMR{DetailedMergeStatus: "not_approved"}, MergeClean},
		{glMR{DetailedMergeStatus: "broken_status", HasConflicts: true}, MergeConflict},
		{glMR{MergeStatus: "can_be_merged"}, MergeClean}, // before 15.6
		{glMR{MergeStatus: "cannot_be_merged"}, MergeConflict},
		{glMR{MergeStatus: "cannot_be_merged_recheck"}, MergeUnknown},
		{glMR{}, MergeUnknown},
	} {
		if got := c.m.mergeable(); got != c.want {
			t.Errorf("%+v: mergeable = %q, want %q", c.m, got, c.want)
		}
	}
}
