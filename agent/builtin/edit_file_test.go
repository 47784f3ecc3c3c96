package builtin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEditFileReplacesAUniqueString(t *testing.T) {
	env, _ := testEnv(t)
	p := filepath.Join(env.Workdir, "a.go")
	writeTree(t, env.Workdir, map[string]string{"a.go": "package a\n\nfunc F() int { return 1 }\n"})
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	ef := tool(t, env, "edit_file")
	got := mustCall(t, ef, map[string]any{"path": "a.go", "old_string": "return 1", "new_string": "return 2"})
	if got != "edited a.go: replaced 1 occurrence (first at line 3)" {
		t.Errorf("result %q", got)
	}
	if readString(t, p) != "package a\n\nfunc F() int { return 2 }\n" {
		t.Errorf("content %q", readString(t, p))
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o755 {
		t.Errorf("mode not preserved: %v", info.Mode().Perm())
	}
}

func TestEditFileUniqueness(t *testing.T) {
	env, _ := testEnv(t)
	p := filepath.Join(env.Workdir, "a.txt")
	const orig = "x = 1\ny = 1\nz = 1\n"
	writeTree(t, env.Workdir, map[string]string{"a.txt": orig})
	ef := tool(t, env, "edit_file")
	wantErr(t, ef, map[string]any{"path": "a.txt", "old_string": "= 1", "new_string": "= 2"}, "occurs 3 times", "context", "replace_all")
	wantErr(t, ef, map[string]any{"path": "a.txt", "old_string": "w = 1", "new_string": "w = 2"}, "not found")
	wantErr(t, ef, map[string]any{"path": "a.txt", "old_string": "x = 1", "new_string": "x = 1"}, "identical")
	wantErr(t, ef, map[string]any{"path": "a.txt", "old_string": "", "new_string": "q"}, "must not be empty")
	if readString(t, p) != orig {
		t.Fatal("a failed edit changed the file")
	}
	got := mustCall(t, ef, map[string]any{"path": "a.txt", "old_string": "= 1", "new_string": "= 2", "replace_all": true})
	if got != "edited a.txt: replaced 3 occurrences (first at line 1)" {
		t.Errorf("result %q", got)
	}
	if readString(t, p) != "x = 2\ny = 2\nz = 2\n" {
		t.Errorf("content %q", readString(t, p))
	}
}

func TestEditFileRefusals(t *testing.T) {
	env, _ := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"bin": "a\x00b", "d/x": ""})
	ef := tool(t, env, "edit_file")
	wantErr(t, ef, map[string]any{"path": "missing", "old_string": "a", "new_string": "b"}, "does not exist", "write_file")
	wantErr(t, ef, map[string]any{"path": "bin", "old_string": "a", "new_string": "b"}, "binary")
	wantErr(t, ef, map[string]any{"path": "d", "old_string": "a", "new_string": "b"}, "directory")
}

func TestEditFileKeepsCRLFLineEndings(t *testing.T) {
	env, _ := testEnv(t)
	p := filepath.Join(env.Workdir, "win.txt")
	writeTree(t, env.Workdir, map[string]string{"win.txt": "one\r\ntwo\r\nthree\r\n"})
	// The model copies lines from read_file, which shows them without \r.
	mustCall(t, tool(t, env, "edit_file"), map[string]any{"path": "win.txt", "old_string": "one\ntwo", "new_string": "1\n2\n2.5"})
	if got := readString(t, p); got != "1\r\n2\r\n2.5\r\nthree\r\n" {
		t.Errorf("content %q", got)
	}
}
