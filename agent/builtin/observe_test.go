package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"reasonix/agent"
)

// observedEnv is testEnv with read-before-write on, and a file a.txt.
func observedEnv(t *testing.T) (agent.ToolEnv, string) {
	t.Helper()
	env, _ := testEnv(t)
	env.Observed = agent.NewObserved()
	p := filepath.Join(env.Workdir, "a.txt")
	if err := os.WriteFile(p, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return env, p
}

// TestEditNeedsAReadOfTheCurrentVersion: an edit of a file the run never
// read is refused; after a read of any window it goes through; a change on
// disk since (a command's) refuses it again until the file is read again.
func TestEditNeedsAReadOfTheCurrentVersion(t *testing.T) {
	env, p := observedEnv(t)
	edit, read := tool(t, env, "edit_file"), tool(t, env, "read_file")
	change := map[string]any{"path": "a.txt", "old_string": "one", "new_string": "ONE"}
	wantErr(t, edit, change, "a.txt has not been read in this task", "read_file first")
	mustCall(t, read, map[string]any{"path": "a.txt", "offset": 2, "limit": 1})
	mustCall(t, edit, change)
	// The tool's own write counts as seen: a second edit needs no read.
	mustCall(t, edit, map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})
	if err := os.WriteFile(p, []byte("ONE\nTWO\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr(t, edit, map[string]any{"path": "a.txt", "old_string": "three", "new_string": "3"}, "changed on disk since this task last read it")
	mustCall(t, read, map[string]any{"path": "a.txt"})
	mustCall(t, edit, map[string]any{"path": "a.txt", "old_string": "three", "new_string": "3"})
	if b, _ := os.ReadFile(p); string(b) != "ONE\nTWO\n3\n" {
		t.Fatalf("a.txt = %q", b)
	}
}

// TestAChangeThatKeepsSizeAndTimeIsSeen: a same-size change whose
// modification time is set back (touch -d, a checkout) is still a change.
func TestAChangeThatKeepsSizeAndTimeIsSeen(t *testing.T) {
	env, p := observedEnv(t)
	mustCall(t, tool(t, env, "read_file"), map[string]any{"path": "a.txt"})
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("ONE"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	wantErr(t, tool(t, env, "multi_edit"), map[string]any{"path": "a.txt", "edits": []map[string]any{{"old_string": "ONE", "new_string": "1"}}},
		"changed on disk")
}

// TestWholeFileWritesAndMovesNeedTheCurrentVersion: replacing or moving a
// file needs it read; creating one does not; nothing is changed by a
// refusal.
func TestWholeFileWritesAndMovesNeedTheCurrentVersion(t *testing.T) {
	env, p := observedEnv(t)
	write, move, read := tool(t, env, "write_file"), tool(t, env, "move_file"), tool(t, env, "read_file")
	wantErr(t, write, map[string]any{"path": "a.txt", "content": "new"}, "a.txt has not been read")
	wantErr(t, move, map[string]any{"path": "a.txt", "new_path": "b.txt"}, "a.txt has not been read")
	if b, _ := os.ReadFile(p); string(b) != "one\ntwo\n" {
		t.Fatalf("a refused call changed a.txt: %q", b)
	}
	mustCall(t, write, map[string]any{"path": "new.txt", "content": "fresh"})
	// Moving new.txt over a.txt replaces a file the run has not read.
	wantErr(t, move, map[string]any{"path": "new.txt", "new_path": "a.txt", "overwrite": true}, "a.txt has not been read")
	mustCall(t, read, map[string]any{"path": "a.txt"})
	mustCall(t, move, map[string]any{"path": "new.txt", "new_path": "a.txt", "overwrite": true})
	mustCall(t, write, map[string]any{"path": "a.txt", "content": "again"})
	if b, _ := os.ReadFile(p); string(b) != "again" {
		t.Fatalf("a.txt = %q", b)
	}
}

// TestWithoutAnObservedRecordNothingIsRefused: the protection is off when
// the run has no record ([tools] protect_changed_files = false).
func TestWithoutAnObservedRecordNothingIsRefused(t *testing.T) {
	env, _ := observedEnv(t)
	env.Observed = nil
	mustCall(t, tool(t, env, "edit_file"), map[string]any{"path": "a.txt", "old_string": "one", "new_string": "ONE"})
}

// TestAResumedRunKeepsWhatItsConversationRead: a run that resumes a stored
// conversation counts the files its successful calls read or wrote as
// seen; a failed read counts for nothing.
func TestAResumedRunKeepsWhatItsConversationRead(t *testing.T) {
	env, p := observedEnv(t)
	if err := os.WriteFile(filepath.Join(env.Workdir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(path string) string { b, _ := json.Marshal(map[string]string{"path": path}); return string(b) }
	history := []agent.Message{
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "r1", Name: "read_file", Arguments: args("a.txt")}, {ID: "r2", Name: "read_file", Arguments: args("b.txt")}}},
		{Role: agent.RoleTool, ToolCallID: "r1", Content: "     1\tone\n"},
		{Role: agent.RoleTool, ToolCallID: "r2", Content: "error: read_file: something failed"},
	}
	agent.Reobserve(env, history)
	if _, ok := env.Observed.Seen(p); !ok {
		t.Fatal("the stored read of a.txt was not counted")
	}
	edit := tool(t, env, "edit_file")
	mustCall(t, edit, map[string]any{"path": "a.txt", "old_string": "one", "new_string": "ONE"})
	wantErr(t, edit, map[string]any{"path": "b.txt", "old_string": "b", "new_string": "B"}, "b.txt has not been read")
}

// BenchmarkCheckSeen is the cost read-before-write adds to an edit: a stat
// and a lookup among 1,000 seen files.
func BenchmarkCheckSeen(b *testing.B) {
	dir := b.TempDir()
	env := agent.ToolEnv{Workdir: dir, Observed: agent.NewObserved()}
	p := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		env.Observed.Saw(filepath.Join(dir, "other", time.Duration(i).String()), agent.FileVersion{Size: int64(i)})
	}
	sawFile(env, p)
	for b.Loop() {
		if err := checkSeen("edit_file", env, "f.txt", p); err != nil {
			b.Fatal(err)
		}
	}
}
