package webhook_test

import (
	"encoding/json"
	"strings"
	"testing"

	"reasonix/runner/webhook"
)

func TestFilter(t *testing.T) {
	var payload any
	if err := json.Unmarshal([]byte(`{"action":"completed","check_run":{"conclusion":"failure","pull_requests":[{"number":7}]},
		"repository":{"name":"app","fork":false},"sender":null}`), &payload); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{``, true},
		{`check_run.conclusion == "failure"`, true},
		{`check_run.conclusion == "success"`, false},
		{`check_run.conclusion != "success" && repository.name == "app"`, true},
		{`check_run.conclusion == "failure" && repository.fork == true`, false},
		{`check_run.pull_requests.0.number == 7`, true},
		{`check_run.pull_requests.1.number == 7`, false},
		{`sender == null`, true},
		{`missing.path == "x"`, false},
		{`missing.path != "x"`, true},
		{`check_run.pull_requests.0.number == "7"`, false}, // no coercion between types
		{`repository.fork == false`, true},
	} {
		f, err := webhook.ParseFilter(tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if got := f.Match(payload); got != tc.want {
			t.Errorf("%q matched %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestFilterRefuses(t *testing.T) {
	for _, src := range []string{`a = "b"`, `a == `, `== "b"`, `a == "b" || c == "d"`, `a == "open`, `a == b`,
		`a == 0x10`, `a == "b" &&`, `a.b.c == "d" extra`, `len(a) == 1`, `a == NaN`, strings.Repeat("a == 1 && ", 40) + "a == 1"} {
		if _, err := webhook.ParseFilter(src); err == nil {
			t.Errorf("%q was accepted", src)
		}
	}
}
