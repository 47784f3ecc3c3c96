package recipe

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeAt writes a file and sets its modification time.
func writeAt(t *testing.T, p, data string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func byPath(files []File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		out[f.Path] = string(f.Data) + f.Refused
	}
	return out
}

// TestDirCacheRereadsOnlyChangedStamps: a file whose size and modification
// time are unchanged comes from memory (so an edit that keeps both is not
// seen: the stamp is the contract), a changed stamp is read again, a new
// file appears and a removed one is gone.
func TestDirCacheRereadsOnlyChangedStamps(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	writeAt(t, filepath.Join(root, "a", "SKILL.md"), "alpha", old)
	writeAt(t, filepath.Join(root, "b.md"), "bravo", old)
	writeAt(t, filepath.Join(root, "gone.md"), "gone", old)
	var c DirCache
	got, err := c.ReadDir(root, root)
	if err != nil || len(got) != 3 {
		t.Fatalf("first read = %v, %v", got, err)
	}

	// Same size, same time: remembered. New size or time: read again.
	writeAt(t, filepath.Join(root, "a", "SKILL.md"), "ALPHA", old)
	writeAt(t, filepath.Join(root, "b.md"), "bravo, longer", old)
	writeAt(t, filepath.Join(root, "c.md"), "charlie", old)
	if err := os.Remove(filepath.Join(root, "gone.md")); err != nil {
		t.Fatal(err)
	}
	files, err := c.ReadDir(root, root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a/SKILL.md": "alpha", "b.md": "bravo, longer", "c.md": "charlie"}
	if m := byPath(files); len(m) != len(want) || m["a/SKILL.md"] != want["a/SKILL.md"] || m["b.md"] != want["b.md"] || m["c.md"] != want["c.md"] {
		t.Fatalf("second read = %v, want %v", m, want)
	}
	// A new time is a new stamp.
	writeAt(t, filepath.Join(root, "a", "SKILL.md"), "ALPHA", old.Add(time.Second))
	if files, _ = c.ReadDir(root, root); byPath(files)["a/SKILL.md"] != "ALPHA" {
		t.Fatalf("a touched file was not read again: %v", byPath(files))
	}
	// What a plain ReadDir sees is what the cache now holds.
	plain, _ := ReadDir(root, root)
	if p, m := byPath(plain), byPath(files); len(p) != len(m) || p["a/SKILL.md"] != m["a/SKILL.md"] || p["b.md"] != m["b.md"] {
		t.Fatalf("cache %v, disk %v", m, p)
	}
}

// TestDirCacheDistrustsRecentStamps: a file modified within the racy
// window is read again on every call, even with its stamp unchanged, since
// a second write in the same clock tick would not change it.
func TestDirCacheDistrustsRecentStamps(t *testing.T) {
	root := t.TempDir()
	mtime := time.Now().Add(-time.Hour)
	writeAt(t, filepath.Join(root, "a.md"), "alpha", mtime)
	now := mtime.Add(time.Second) // the cache sees the file as just written
	c := DirCache{now: func() time.Time { return now }}
	if _, err := c.ReadDir(root, root); err != nil {
		t.Fatal(err)
	}
	writeAt(t, filepath.Join(root, "a.md"), "ALPHA", mtime)
	files, _ := c.ReadDir(root, root)
	if byPath(files)["a.md"] != "ALPHA" {
		t.Fatalf("a recent stamp was trusted: %v", byPath(files))
	}
	now = mtime.Add(time.Hour) // now old enough to be remembered
	c.ReadDir(root, root)
	writeAt(t, filepath.Join(root, "a.md"), "alpha", mtime)
	if files, _ = c.ReadDir(root, root); byPath(files)["a.md"] != "ALPHA" {
		t.Fatalf("an old stamp was not remembered: %v", byPath(files))
	}
}

// TestDirCacheChecksLinksEveryTime: a link remembered while it pointed
// inside the boundary is refused once it points outside, and a cached
// root that now resolves outside its boundary is an error.
func TestDirCacheChecksLinksEveryTime(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	old := time.Now().Add(-time.Hour)
	writeAt(t, filepath.Join(root, "real.md"), "inside", old)
	writeAt(t, filepath.Join(outside, "secret.md"), "secret", old)
	link := filepath.Join(root, "link.md")
	if err := os.Symlink(filepath.Join(root, "real.md"), link); err != nil {
		t.Fatal(err)
	}
	var c DirCache
	if files, err := c.ReadDir(root, root); err != nil || byPath(files)["link.md"] != "inside" {
		t.Fatalf("first read = %v, %v", byPath(files), err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), link); err != nil {
		t.Fatal(err)
	}
	files, err := c.ReadDir(root, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := byPath(files)["link.md"]; got == "inside" || got == "secret" || got == "" {
		t.Fatalf("a link that now leaves the root = %q", got)
	}
	moved := filepath.Join(base, "moved")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, root); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadDir(root, moved); err == nil {
		t.Fatal("a root that now resolves outside its boundary was read")
	}
}
