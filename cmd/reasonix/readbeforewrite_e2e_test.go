package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunEditsOnlyWhatItHasRead: on the built binary, an edit of a file
// the run has not read is refused with a tool error, the same edit after a
// read goes through, and after a command changed the file on disk the next
// edit is refused again until the file is read again.
func TestRunEditsOnlyWhatItHasRead(t *testing.T) {
	e := newE2E(t,
		toolTurn(call("e1", "edit_file", `{"path":"a.txt","old_string":"one","new_string":"ONE"}`)),
		toolTurn(call("r1", "read_file", `{"path":"a.txt","limit":1}`)),
		toolTurn(call("e2", "edit_file", `{"path":"a.txt","old_string":"one","new_string":"ONE"}`)),
		toolTurn(call("b1", "bash", `{"command":"echo three >> a.txt"}`)),
		toolTurn(call("e3", "edit_file", `{"path":"a.txt","old_string":"two","new_string":"TWO"}`)),
		toolTurn(call("r2", "read_file", `{"path":"a.txt"}`)),
		toolTurn(call("e4", "edit_file", `{"path":"a.txt","old_string":"two","new_string":"TWO"}`)),
		answer("edited a.txt"),
	)
	if err := os.WriteFile(filepath.Join(e.work, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.run("run", "--auto", "edit a.txt")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	reqs := e.srv.Requests()
	results := map[string]string{}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	for id, want := range map[string]string{
		"e1": "a.txt has not been read in this task",
		"e2": "edited a.txt",
		"e3": "changed on disk since this task last read it",
		"e4": "edited a.txt",
	} {
		if !strings.Contains(results[id], want) {
			t.Errorf("%s: %q, want %q", id, results[id], want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.work, "a.txt")); string(b) != "ONE\nTWO\nthree\n" {
		t.Fatalf("a.txt = %q", b)
	}
}
