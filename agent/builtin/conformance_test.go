package builtin

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// conformanceFiles is the workspace every conformance subtest starts from.
var conformanceFiles = map[string]string{
	"a.txt":     "alpha\nbeta\n",
	"d/c.txt":   "gamma\n",
	"d/e/f.go":  "package e\n",
	"notes.md":  "# notes\nalpha again\n",
	"empty.txt": "",
}

// conformance holds the agent.Tool contract cases of every built-in. A
// built-in registered without an entry here fails the test, so a new tool
// cannot skip the suite.
var conformance = map[string]agenttest.ToolCases{
	"bash": {
		Valid:    []string{`{"command":"echo hi"}`, `{"command":"exit 3"}`, `{"command":"sleep 60","run_in_background":true}`},
		Invalid:  []string{`{}`, `{"command":""}`, `{"cmd":"ls"}`, `{"command":"true","timeout_seconds":"5"}`},
		Blocking: `{"command":"sleep 60"}`,
	},
	"edit_file": {
		Valid:   []string{`{"path":"a.txt","old_string":"alpha","new_string":"ALPHA"}`},
		Invalid: []string{`{"path":"a.txt","old_string":"nowhere","new_string":"x"}`, `{"path":"a.txt","old_string":"x"}`},
	},
	"glob": {
		ReadOnly: true,
		Valid:    []string{`{"pattern":"**/*.txt"}`, `{"pattern":"*.go","path":"d"}`, `{"pattern":"nothing-*"}`},
		Invalid:  []string{`{"path":"."}`, `{"pattern":1}`},
	},
	"grep": {
		ReadOnly: true,
		Valid:    []string{`{"pattern":"alpha"}`, `{"pattern":"GAMMA","case_insensitive":true,"path":"d"}`, `{"pattern":"zzz"}`},
		Invalid:  []string{`{}`, `{"pattern":"("}`, `{"pattern":"x","max_results":-1}`},
	},
	// Each job case starts with job-1, a background `sleep 60`, running.
	"job_kill": {
		ReadOnly: true,
		Valid:    []string{`{"job_id":"job-1"}`},
		Invalid:  []string{`{}`, `{"job_id":"job-9"}`, `{"job_id":1}`},
	},
	"job_output": {
		ReadOnly: true,
		Valid:    []string{`{"job_id":"job-1"}`, `{"job_id":"job-1","wait_seconds":0}`},
		Invalid:  []string{`{}`, `{"job_id":"job-9"}`, `{"job_id":"job-1","wait_seconds":-1}`},
		Blocking: `{"job_id":"job-1","wait_seconds":600}`,
	},
	"ls": {
		ReadOnly: true,
		Valid:    []string{`{}`, `{"path":"d","recursive":true}`},
		Invalid:  []string{`{"recursive":"yes"}`, `{"path":"missing"}`},
	},
	"move_file": {
		Valid:   []string{`{"path":"a.txt","new_path":"moved/a.txt"}`},
		Invalid: []string{`{"path":"a.txt"}`, `{"path":"missing","new_path":"b"}`},
	},
	"multi_edit": {
		Valid: []string{`{"path":"a.txt","edits":[{"old_string":"alpha","new_string":"one"},{"old_string":"beta","new_string":"two"}]}`},
		Invalid: []string{`{"path":"a.txt","edits":[]}`, `{"path":"a.txt","edits":"x"}`,
			`{"path":"a.txt","edits":[{"old_string":"x"}]}`},
	},
	"read_file": {
		ReadOnly: true,
		Valid:    []string{`{"path":"a.txt"}`, `{"path":"notes.md","offset":2,"limit":1}`, `{"path":"empty.txt"}`},
		Invalid:  []string{`{}`, `{"path":"missing.txt"}`, `{"path":"a.txt","offset":"ten"}`, `{"path":"../outside"}`},
	},
	"todo_write": {
		ReadOnly: true,
		Valid: []string{`{"todos":[{"content":"read the code","status":"completed"},{"content":"fix it","status":"in_progress"}]}`,
			`{"todos":[]}`},
		Invalid: []string{`{"todos":[{"content":"a"}]}`, `{"todos":[{"content":"a","status":"done"}]}`},
	},
	// web_fetch's site is a test server conformanceTool maps the name to.
	"web_fetch": {
		Valid:   []string{`{"url":"http://conformance.test/"}`, `{"url":"http://conformance.test/plain"}`},
		Invalid: []string{`{}`, `{"url":"ftp://conformance.test/"}`, `{"url":"http://127.0.0.1:1/"}`, `{"url":1}`},
	},
	"write_file": {
		Valid:   []string{`{"path":"new/b.txt","content":"hello\n"}`, `{"path":"a.txt","content":""}`},
		Invalid: []string{`{"path":"a.txt"}`, `{"path":"a.txt","content":7}`, `{"path":"../outside","content":"x"}`},
	},
}

// conformanceTool builds the built-in name in a workspace holding
// conformanceFiles, with a run's background jobs (job-1 running, for the
// job tools' cases).
func conformanceTool(t *testing.T, name string) (agent.Tool, agent.ToolEnv) {
	env, _ := testEnv(t)
	writeTree(t, env.Workdir, conformanceFiles)
	env.Jobs = agent.NewJobs()
	t.Cleanup(env.Jobs.Close)
	if name == "web_fetch" {
		serveWebFetch(t, "conformance.test")
	}
	if name == "job_output" || name == "job_kill" {
		mustCall(t, tool(t, env, "bash"), map[string]any{"command": "sleep 60", "run_in_background": true})
	}
	return tool(t, env, name), env
}

func TestBuiltinsKeepTheToolContract(t *testing.T) {
	registered := map[string]bool{}
	for _, name := range agent.Builtins() {
		registered[name] = true
		cases, ok := conformance[name]
		if !ok {
			t.Errorf("built-in %q has no conformance cases: add it to the conformance table", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			agenttest.TestTool(t, func(t *testing.T) agent.Tool {
				tl, _ := conformanceTool(t, name)
				return tl
			}, cases)
		})
	}
	for name := range conformance {
		if !registered[name] {
			t.Errorf("conformance cases for %q, which is not a registered built-in", name)
		}
	}
}

// TestReadOnlyBuiltinsLeaveTheWorkspaceAlone backs the read-only class with
// evidence the generic suite cannot gather: after every valid call of a
// read-only built-in the workspace is byte for byte what it was.
func TestReadOnlyBuiltinsLeaveTheWorkspaceAlone(t *testing.T) {
	for _, name := range agent.Builtins() {
		cases := conformance[name]
		if !cases.ReadOnly {
			continue
		}
		tl, env := conformanceTool(t, name)
		before := snapshot(t, env.Workdir)
		for _, args := range cases.Valid {
			mustCall(t, tl, args)
			if after := snapshot(t, env.Workdir); !maps.Equal(before, after) {
				t.Errorf("read-only %s(%s) changed the workspace: %v, was %v", name, args, after, before)
			}
		}
	}
}

// snapshot maps every path under dir to its mode and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entry += " " + string(b)
		}
		out[p] = entry
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
