package codeindex

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBodylessParseListsWhatTheFullParseDoes: skipping function bodies is
// only a speed-up — over the Go files of a few packages of this repository
// it finds exactly the symbols a parse of the whole file finds.
func TestBodylessParseListsWhatTheFullParseDoes(t *testing.T) {
	files, _ := filepath.Glob("../../agent/builtin/*.go")
	more, _ := filepath.Glob("../../runner/store/*.go")
	files = append(files, more...)
	if len(files) < 20 {
		t.Fatalf("only %d files found", len(files))
	}
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fast := show(scanGo(p, src))
		full := show(scanGoFull(p, src))
		if !slices.Equal(fast, full) {
			t.Errorf("%s: bodyless %q, full %q", p, fast, full)
		}
	}
}

// scanGoFull is scanGo on a source whose bodies cannot be recognised.
func scanGoFull(rel string, src []byte) []Symbol {
	saved := withoutBodiesFunc
	withoutBodiesFunc = func(b []byte) []byte { return b }
	defer func() { withoutBodiesFunc = saved }()
	return scanGo(rel, src)
}
