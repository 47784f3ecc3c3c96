package dashboard

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDetailChunk: the pages of any text put back together are the text;
// none is over maxDetail; valid UTF-8 is never cut inside a character; a
// page past the last is empty.
func FuzzDetailChunk(f *testing.F) {
	f.Add("", 1)
	f.Add(strings.Repeat("a", maxDetail), 1)
	f.Add(strings.Repeat("a", maxDetail-1)+"é"+strings.Repeat("b", maxDetail), 2)
	f.Add(strings.Repeat("\x80", 2*maxDetail+3), 3)
	f.Add(strings.Repeat("日本", maxDetail), 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		_, pages := detailChunk(s, 1)
		if pages < 1 || (len(s) > 0 && pages > len(s)) {
			t.Fatalf("%d bytes make %d pages", len(s), pages)
		}
		var all strings.Builder
		for i := 1; i <= pages; i++ {
			c, p := detailChunk(s, i)
			if p != pages || len(c) > maxDetail || (i > 1 && c == "") {
				t.Fatalf("page %d of %d: %d bytes, %d pages", i, pages, len(c), p)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c) {
				t.Fatalf("page %d cuts a character", i)
			}
			all.WriteString(c)
		}
		if all.String() != s {
			t.Fatal("the pages put together are not the text")
		}
		if n > pages {
			if c, _ := detailChunk(s, n); c != "" {
				t.Fatalf("page %d past the last %d = %d bytes", n, pages, len(c))
			}
		}
	})
}
