package bm25

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSearchRanksRareTermsFirst(t *testing.T) {
	x := New()
	x.Add("the deploy script lives in scripts/deploy.sh")   // 0
	x.Add("tests run with make check, never go test ./...") // 1
	x.Add("the staging database is reset every night")      // 2
	x.Add("make sure the linter is happy before a commit")  // 3
	hits := x.Search("how do I run the tests?", Opts{})
	if len(hits) == 0 || hits[0].Doc != 1 {
		t.Fatalf("hits = %+v, want doc 1 first", hits)
	}
	for _, h := range hits {
		if h.Doc == 0 || h.Doc == 2 {
			t.Errorf("doc %d shares no rare term with the query but was returned: %+v", h.Doc, hits)
		}
	}
	if hits := x.Search("the is a of", Opts{}); len(hits) != 0 {
		t.Errorf("a query of stop words matched %+v", hits)
	}
	if hits := New().Search("anything", Opts{}); hits != nil {
		t.Errorf("empty index returned %+v", hits)
	}
}

func TestSearchBoundsAndFilters(t *testing.T) {
	x := New()
	for i := range 50 {
		x.Add(fmt.Sprintf("note %d about postgres", i))
	}
	x.Add("postgres postgres postgres replication lag")
	if hits := x.Search("postgres", Opts{Limit: 3}); len(hits) != 3 {
		t.Errorf("Limit 3 returned %d hits", len(hits))
	}
	hits := x.Search("postgres replication", Opts{Floor: 0.9})
	if len(hits) != 1 || hits[0].Doc != 50 {
		t.Errorf("Floor 0.9 kept %+v, want only the strong hit", hits)
	}
	hits = x.Search("postgres", Opts{Limit: 100, Keep: func(d int) bool { return d%2 == 0 }})
	if len(hits) != 26 {
		t.Errorf("Keep even docs returned %d hits, want 26", len(hits))
	}
	for _, h := range hits {
		if h.Doc%2 != 0 {
			t.Errorf("Keep let doc %d through", h.Doc)
		}
	}
}

func TestTerms(t *testing.T) {
	got := strings.Join(Terms("The DB_URL is in .env; ask Zoë about it! x 42"), ",")
	if got != "db,url,env,ask,zoë,42" {
		t.Errorf("Terms = %q", got)
	}
}

// FuzzTerms: whatever the text, terms are lowercase, at least two bytes,
// never stop words, and searching for the text itself finds the document.
func FuzzTerms(f *testing.F) {
	for _, s := range []string{"", "a", "Tests run with make check", "\xff\xfe", "ǅ İ ß", strings.Repeat("x ", 1000), "the of and"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms := Terms(s)
		for _, w := range terms {
			if len(w) < 2 || stop[w] || (utf8.ValidString(w) && strings.ToLower(w) != w) {
				t.Fatalf("term %q of %q", w, s)
			}
		}
		x := New()
		x.Add("unrelated words only")
		doc := x.Add(s)
		if len(terms) == 0 {
			return
		}
		hits := x.Search(s, Opts{Limit: 2})
		found := false
		for _, h := range hits {
			found = found || h.Doc == doc
		}
		if !found {
			t.Fatalf("searching %q did not find it: %+v", s, hits)
		}
	})
}
