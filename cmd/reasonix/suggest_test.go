package main

import "testing"

func TestEditDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3},
		{"tasks", "tasks", 0}, {"taks", "tasks", 1}, {"tsaks", "tasks", 1}, {"auot", "auto", 1}, {"ca", "abc", 3},
		{"kitten", "sitting", 3}, {"añb", "ab", 1},
	}
	for _, c := range cases {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"serve", "run", "tasks", "approvals", "config", "mcp", "migrate", "doctor", "version", "help"}
	cases := map[string]string{
		"taks":       "tasks",
		"servr":      "serve",
		"docter":     "doctor",
		"app":        "approvals", // a prefix
		"approvls":   "approvals",
		"xyz":        "",
		"frobnicate": "",
		"r":          "", // one letter is no evidence
	}
	for word, want := range cases {
		if got := nearest(word, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", word, got, want)
		}
	}
}
