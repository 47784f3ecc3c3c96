package codeindex

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(syms []Symbol) []string {
	var out []string
	for _, s := range syms {
		out = append(out, s.Path+":"+s.Qualified())
	}
	return out
}

func TestFindRanksFiltersAndBounds(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/a.go", "package a\n\nfunc Parse() {}\nfunc ParseAll() {}\nfunc MustParse() {}\ntype Parser struct{}\nfunc (p *Parser) Parse() {}\n")
	write(t, dir, "b/b.py", "def parse():\n    pass\n")
	write(t, dir, "node_modules/x/x.js", "function parse() {}\n")
	write(t, dir, ".git/y.go", "package y\nfunc Parse() {}\n")
	write(t, dir, "big.go", "package big\nfunc Parse() {}\n"+strings.Repeat("// padding\n", maxFileSize/10))
	ix := New(dir)
	ctx := context.Background()
	got, total, err := ix.Find(ctx, Query{Name: "parse"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/a.go:Parse", "a/a.go:Parser.Parse", "b/b.py:parse", "a/a.go:ParseAll", "a/a.go:Parser", "a/a.go:MustParse"}
	if !slices.Equal(names(got), want) || total != 6 {
		t.Errorf("Find(parse) = %q (%d), want %q (6)", names(got), total, want)
	}
	got, total, _ = ix.Find(ctx, Query{Name: "parse", Limit: 2})
	if len(got) != 2 || total != 6 {
		t.Errorf("limit 2: %d shown of %d", len(got), total)
	}
	got, _, _ = ix.Find(ctx, Query{Name: "Parser.parse"})
	if !slices.Equal(names(got), []string{"a/a.go:Parser.Parse"}) {
		t.Errorf("qualified query = %q", names(got))
	}
	got, _, _ = ix.Find(ctx, Query{Kind: "struct"})
	if !slices.Equal(names(got), []string{"a/a.go:Parser"}) {
		t.Errorf("kind struct = %q", names(got))
	}
	got, _, _ = ix.Find(ctx, Query{Name: "parse", Kind: "func", Keep: func(p string) bool { return strings.HasPrefix(p, "b/") }})
	if !slices.Equal(names(got), []string{"b/b.py:parse"}) {
		t.Errorf("path-filtered = %q", names(got))
	}
}

// TestRefreshFollowsTheFiles: a changed file is rescanned, a removed one
// forgotten, an unchanged one kept without reading it again.
func TestRefreshFollowsTheFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.go", "package a\nfunc Old() {}\n")
	write(t, dir, "b.go", "package a\nfunc Stay() {}\n")
	ix := New(dir)
	ctx := context.Background()
	if err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	before := ix.files["b.go"]
	write(t, dir, "a.go", "package a\nfunc New() {}\nfunc Newer() {}\n")
	// A same-size rewrite within the clock's resolution still differs by
	// modification time once it is set apart explicitly.
	if err := os.Chtimes(filepath.Join(dir, "a.go"), time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := ix.Find(ctx, Query{Name: "old"}); len(got) != 0 {
		t.Errorf("Old still found after the change: %q", names(got))
	}
	if got, _, _ := ix.Find(ctx, Query{Name: "new"}); len(got) != 2 {
		t.Errorf("New found %q", names(got))
	}
	if ix.files["b.go"] != before {
		t.Error("an unchanged file was rescanned")
	}
	if err := os.Remove(filepath.Join(dir, "b.go")); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := ix.Find(ctx, Query{Name: "stay"}); len(got) != 0 {
		t.Errorf("a removed file's symbols remain: %q", names(got))
	}
	if files, syms := ix.Files(); files != 1 || syms != 2 {
		t.Errorf("Files() = %d, %d", files, syms)
	}
}

func TestForSharesAndBoundsTheCache(t *testing.T) {
	a := For("/tmp/codeindex-a")
	if For("/tmp/codeindex-a") != a {
		t.Fatal("For returned a new index for the same root")
	}
	for i := range cacheSize {
		For(filepath.Join("/tmp/codeindex-other", string(rune('a'+i))))
	}
	if For("/tmp/codeindex-a") == a {
		t.Error("the least recently used index was kept past the cache size")
	}
}

// repoRoot is this repository's root, the benchmark's tree.
func repoRoot(b *testing.B) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkIndexColdRepo indexes this repository from nothing (budget
// 500 ms).
func BenchmarkIndexColdRepo(b *testing.B) {
	root := repoRoot(b)
	cpu := cpuTime()
	for b.Loop() {
		if err := New(root).Refresh(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
}

// BenchmarkQueryWarmRepo is one query against an index of this repository
// already built: the refresh's walk plus the search (budget 20 ms).
func BenchmarkQueryWarmRepo(b *testing.B) {
	ix := New(repoRoot(b))
	ctx := context.Background()
	if err := ix.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	cpu := cpuTime()
	for b.Loop() {
		if got, _, err := ix.Find(ctx, Query{Name: "execute", Limit: 50}); err != nil || len(got) == 0 {
			b.Fatal(err, len(got))
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
}
