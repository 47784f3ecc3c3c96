package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// archiveOf builds a gzipped tar of the given headers (regular files get
// their Linkname as content), the way a hostile or broken archive would.
func archiveOf(t testing.TB, hdrs ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range hdrs {
		body := ""
		if h.Typeflag == tar.TypeReg {
			body, h.Linkname = h.Linkname, ""
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUnpackScratchStaysInside: entries that name a place outside the
// directory, or reach it through a link, are refused and write nothing
// outside.
func TestUnpackScratchStaysInside(t *testing.T) {
	for name, a := range map[string][]tar.Header{
		"dot-dot":  {{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644, Linkname: "x"}},
		"absolute": {{Name: "/tmp/evil", Typeflag: tar.TypeReg, Mode: 0o644, Linkname: "x"}},
		"through a link": {
			{Name: "out", Typeflag: tar.TypeSymlink, Linkname: ".."},
			{Name: "out/evil", Typeflag: tar.TypeReg, Mode: 0o644, Linkname: "x"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "task")
			if err := unpackScratch(archiveOf(t, a...), dir); err == nil {
				t.Fatal("unpacked a hostile archive")
			}
			if _, err := os.Stat(filepath.Join(parent, "evil")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a file was written outside: %v", err)
			}
		})
	}
}

// TestPackScratchRoundTrip: what packScratch packs, unpackScratch restores
// (contents, modes, links, empty directories); a directory over the limit
// is errScratchTooLarge.
func TestPackScratchRoundTrip(t *testing.T) {
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "a", "empty"), 0o755))
	must(os.WriteFile(filepath.Join(src, "a", "f.txt"), []byte("content"), 0o640))
	must(os.WriteFile(filepath.Join(src, "x.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Symlink("a/f.txt", filepath.Join(src, "l")))
	archive, files, err := packScratch(src, 1<<20)
	if err != nil || files != 2 {
		t.Fatalf("pack: %d files, %v", files, err)
	}
	dst := filepath.Join(t.TempDir(), "restored")
	must(unpackScratch(archive, dst))
	if b, err := os.ReadFile(filepath.Join(dst, "l")); err != nil || string(b) != "content" {
		t.Fatalf("through the link: %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "x.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("x.sh: %v, %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "a", "empty")); err != nil || !fi.IsDir() {
		t.Fatalf("empty dir: %v", err)
	}
	// Unpacking again over the restored copy replaces it.
	must(unpackScratch(archive, dst))
	if _, _, err := packScratch(src, 64); !errors.Is(err, errScratchTooLarge) {
		t.Fatalf("pack over the limit: %v", err)
	}
}

// FuzzUnpackScratch: no archive panics the unpacker or writes outside
// its directory.
func FuzzUnpackScratch(f *testing.F) {
	f.Add(archiveOf(f, tar.Header{Name: "a/b.txt", Typeflag: tar.TypeReg, Mode: 0o644, Linkname: "hi"}))
	f.Add(archiveOf(f, tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc"},
		tar.Header{Name: "l/passwd", Typeflag: tar.TypeReg, Mode: 0o644, Linkname: "x"}))
	f.Add(archiveOf(f, tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o000}))
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		_ = unpackScratch(data, filepath.Join(parent, "task"))
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "task" {
				t.Fatalf("wrote %s outside the directory", e.Name())
			}
		}
	})
}

// BenchmarkScratchMove packs and unpacks a scratch directory of 200 source
// files of 4 KiB (800 KiB), what a hand-over adds besides one store write
// and one read.
func BenchmarkScratchMove(b *testing.B) {
	src := b.TempDir()
	line := bytes.Repeat([]byte("func f() int { return 42 } // some source text\n"), 85)
	for i := range 200 {
		dir := filepath.Join(src, "pkg", string(rune('a'+i%20)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+i/20))+".go"), line, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var size int
	for i := 0; b.Loop(); i++ {
		archive, _, err := packScratch(src, DefaultScratchMoveLimit)
		if err != nil {
			b.Fatal(err)
		}
		size = len(archive)
		if err := unpackScratch(archive, filepath.Join(b.TempDir(), "task")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "archive-bytes")
}
