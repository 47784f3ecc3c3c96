package builtin

import (
	"strings"
	"testing"

	"reasonix/agent"
)

func TestArgumentErrorsNameTheField(t *testing.T) {
	env, _ := testEnv(t)
	cases := []struct {
		tool  string
		args  string
		parts []string
	}{
		{"read_file", `{"path":`, []string{"read_file", "JSON"}},
		{"read_file", `[1,2]`, []string{"read_file", "JSON object"}},
		{"read_file", `null`, []string{"JSON object"}},
		{"read_file", `{}`, []string{`missing required argument "path"`}},
		{"read_file", `{"path":null}`, []string{`"path"`}},
		{"read_file", `{"path":"a","offset":"ten"}`, []string{`"offset"`, "integer", "string"}},
		{"read_file", `{"path":"a","limit":1.5}`, []string{`"limit"`, "integer"}},
		{"read_file", `{"file_path":"a","path":"b"}`, []string{`"file_path"`, "path", "offset", "limit"}},
		{"write_file", `{"path":"a"}`, []string{`"content"`}},
		{"write_file", `{"path":"a","content":7}`, []string{`"content"`, "string", "number"}},
		{"edit_file", `{"path":"a","old_string":"x"}`, []string{`"new_string"`}},
		{"multi_edit", `{"path":"a","edits":[{"old_string":"x"}]}`, []string{"edits[0]", `"new_string"`}},
		{"multi_edit", `{"path":"a","edits":"x"}`, []string{`"edits"`, "array"}},
		{"multi_edit", `{"path":"a","edits":[]}`, []string{"at least one"}},
		{"move_file", `{"path":"a"}`, []string{`"new_path"`}},
		{"ls", `{"recursive":"yes"}`, []string{`"recursive"`, "boolean"}},
		{"glob", `{"path":"."}`, []string{`"pattern"`}},
		{"grep", `{"pattern":"x","max_results":-1}`, []string{"max_results"}},
		{"bash", `{"cmd":"ls"}`, []string{`"cmd"`}},
		{"bash", `{"command":"true","timeout_seconds":"5"}`, []string{`"timeout_seconds"`, "integer"}},
		{"todo_write", `{"todos":[{"content":"a"}]}`, []string{"todos[0]", `"status"`}},
		{"todo_write", `{"todos":[{"content":"a","status":"done"}]}`, []string{"todos[0]", "pending, in_progress or completed"}},
	}
	for _, c := range cases {
		t.Run(c.tool+c.args, func(t *testing.T) {
			wantErr(t, tool(t, env, c.tool), c.args, c.parts...)
		})
	}
}

func TestErrorsDoNotMentionGoTypes(t *testing.T) {
	env, _ := testEnv(t)
	_, err := call(t, tool(t, env, "read_file"), `{"path":"a","offset":"x"}`)
	if err == nil || strings.Contains(err.Error(), "Go struct") || strings.Contains(err.Error(), "readFileArgs") {
		t.Fatalf("error leaks Go details: %v", err)
	}
}

func TestFileToolsRefuseWithoutGuard(t *testing.T) {
	env, _ := testEnv(t)
	env.Paths = nil
	calls := map[string]string{
		"read_file":  `{"path":"a"}`,
		"write_file": `{"path":"a","content":"x"}`,
		"edit_file":  `{"path":"a","old_string":"x","new_string":"y"}`,
		"multi_edit": `{"path":"a","edits":[{"old_string":"x","new_string":"y"}]}`,
		"move_file":  `{"path":"a","new_path":"b"}`,
		"ls":         `{}`,
		"glob":       `{"pattern":"*"}`,
		"grep":       `{"pattern":"x"}`,
	}
	for name, args := range calls {
		wantErr(t, tool(t, env, name), args, "no path guard configured")
	}
}

func TestWritersAskForWritePath(t *testing.T) {
	env, g := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"a.txt": "x"})
	g.readOnly = true
	calls := map[string]string{
		"write_file": `{"path":"b","content":"x"}`,
		"edit_file":  `{"path":"a.txt","old_string":"x","new_string":"y"}`,
		"multi_edit": `{"path":"a.txt","edits":[{"old_string":"x","new_string":"y"}]}`,
		"move_file":  `{"path":"a.txt","new_path":"b"}`,
	}
	for name, args := range calls {
		wantErr(t, tool(t, env, name), args, "writes are not allowed")
	}
	if got := readString(t, env.Workdir+"/a.txt"); got != "x" {
		t.Errorf("a.txt changed to %q", got)
	}
	// Readers still work under a read-only guard.
	if out := mustCall(t, tool(t, env, "read_file"), `{"path":"a.txt"}`); !strings.Contains(out, "x") {
		t.Errorf("read_file = %q", out)
	}
}

func TestPathsOutsideTheWorkspaceAreRefused(t *testing.T) {
	env, _ := testEnv(t)
	for _, name := range []string{"read_file", "write_file"} {
		args := map[string]any{"path": "../outside.txt"}
		if name == "write_file" {
			args["content"] = "x"
		}
		wantErr(t, tool(t, env, name), args, "outside the workspace")
	}
}

// FuzzToolArgs throws arbitrary argument bytes at every tool that does not
// run commands: none may panic, and each must answer with a result or an error.
func FuzzToolArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"path":"a.txt"}`, `{"path":"a.txt","offset":3,"limit":1}`,
		`{"path":"d","recursive":true}`, `{"pattern":"**/*.txt"}`, `{"pattern":"(","glob":"{"}`,
		`{"path":"a.txt","old_string":"a","new_string":"b"}`, `{"path":"a.txt","edits":[{"old_string":"a","new_string":"b"}]}`,
		`{"path":"a.txt","new_path":"d/b.txt"}`, `{"todos":[{"content":"x","status":"pending"}]}`,
		`{"path":"a.txt","content":"hi"}`, `{"path":"\u0000"}`,
		`{"path":"a.txt","start_line":1,"end_line":2}`, `{"path":"g.go","symbol":"T.M"}`, `{"path":"g.go","symbol":"(*T"}`,
	} {
		f.Add(s)
	}
	names := []string{"read_file", "write_file", "edit_file", "multi_edit", "move_file", "ls", "glob", "grep", "todo_write",
		"delete_range", "delete_symbol"}
	f.Fuzz(func(t *testing.T, args string) {
		env, _ := testEnv(t)
		env.Emit = func(agent.Event) {}
		writeTree(t, env.Workdir, map[string]string{"a.txt": "alpha\nbeta\n", "d/c.txt": "gamma", "g.go": "package g\n\ntype T int\n\nfunc (T) M() {}\n"})
		for _, name := range names {
			out, err := call(t, tool(t, env, name), args)
			if err == nil && out == "" {
				t.Errorf("%s(%q) returned neither a result nor an error", name, args)
			}
		}
	})
}
