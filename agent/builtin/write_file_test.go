package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	env, _ := testEnv(t)
	wf := tool(t, env, "write_file")
	got := mustCall(t, wf, map[string]any{"path": "new/dir/a.txt", "content": "hello"})
	if got != "created new/dir/a.txt (5 bytes)" {
		t.Errorf("create: %q", got)
	}
	p := filepath.Join(env.Workdir, "new", "dir", "a.txt")
	if readString(t, p) != "hello" {
		t.Fatal("content not written")
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	got = mustCall(t, wf, map[string]any{"path": p, "content": "hi"})
	if got != "replaced new/dir/a.txt (2 bytes; it had 5)" {
		t.Errorf("replace: %q", got)
	}
	if readString(t, p) != "hi" {
		t.Error("content not replaced")
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
		t.Errorf("mode changed to %v", info.Mode().Perm())
	}
	// Empty content is a valid (empty) file.
	mustCall(t, wf, map[string]any{"path": "empty", "content": ""})
	if readString(t, filepath.Join(env.Workdir, "empty")) != "" {
		t.Error("empty file has content")
	}
	wantErr(t, wf, map[string]any{"path": "new", "content": "x"}, "is a directory")
	wantErr(t, wf, map[string]any{"path": "", "content": "x"}, "path must not be empty")
	entries, _ := os.ReadDir(filepath.Join(env.Workdir, "new", "dir"))
	for _, e := range entries {
		if strings.Contains(e.Name(), "reasonix") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
