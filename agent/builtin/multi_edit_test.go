package builtin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMultiEditAppliesInOrder(t *testing.T) {
	env, _ := testEnv(t)
	p := filepath.Join(env.Workdir, "a.txt")
	writeTree(t, env.Workdir, map[string]string{"a.txt": "alpha beta gamma beta\n"})
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	me := tool(t, env, "multi_edit")
	got := mustCall(t, me, map[string]any{"path": "a.txt", "edits": []map[string]any{
		{"old_string": "alpha", "new_string": "ALPHA"},
		{"old_string": "beta", "new_string": "b", "replace_all": true},
		// Sees the result of the previous edit: "b" now occurs exactly twice,
		// "ALPHA b" once.
		{"old_string": "ALPHA b", "new_string": "A-b"},
	}})
	if got != "edited a.txt: applied 3 edits (4 replacements)" {
		t.Errorf("result %q", got)
	}
	if readString(t, p) != "A-b gamma b\n" {
		t.Errorf("content %q", readString(t, p))
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o640 {
		t.Errorf("mode not preserved: %v", info.Mode().Perm())
	}
}

func TestMultiEditIsAllOrNothing(t *testing.T) {
	env, _ := testEnv(t)
	p := filepath.Join(env.Workdir, "a.txt")
	const orig = "one two three\n"
	writeTree(t, env.Workdir, map[string]string{"a.txt": orig})
	before, _ := os.Stat(p)
	me := tool(t, env, "multi_edit")
	wantErr(t, me, map[string]any{"path": "a.txt", "edits": []map[string]any{
		{"old_string": "one", "new_string": "1"},
		{"old_string": "four", "new_string": "4"},
	}}, "edit 2 of 2", "not found", "nothing was written")
	wantErr(t, me, map[string]any{"path": "a.txt", "edits": []map[string]any{
		{"old_string": "one", "new_string": "o"},
		{"old_string": "o", "new_string": "0"},
	}}, "edit 2 of 2", "occurs 2 times")
	if readString(t, p) != orig {
		t.Fatalf("file changed to %q", readString(t, p))
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) {
		t.Error("file was replaced although every edit failed")
	}
}
