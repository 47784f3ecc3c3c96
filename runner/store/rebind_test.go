package store

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzRebind: every "?" becomes $1, $2, … in order and nothing else changes.
// The expectation is built by splitting, independently of rebind's scan.
func FuzzRebind(f *testing.F) {
	for _, s := range []string{"", "SELECT 1", "a = ? AND b IN (?, ?)", "??", "?x?", "$1 ?", "é?\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		parts := strings.Split(q, "?")
		var want strings.Builder
		for i, p := range parts {
			if i > 0 {
				want.WriteString("$" + strconv.Itoa(i))
			}
			want.WriteString(p)
		}
		if got := rebind(q); got != want.String() {
			t.Fatalf("rebind(%q) = %q, want %q", q, got, want.String())
		}
	})
}
