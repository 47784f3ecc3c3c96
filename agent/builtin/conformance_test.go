package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// conformanceFiles is the workspace every conformance subtest starts from.
var conformanceFiles = map[string]string{
	"a.txt":       "alpha\nbeta\n",
	"d/c.txt":     "gamma\n",
	"d/e/f.go":    "package e\n\n// F is deleted by delete_symbol.\nfunc F() {}\n",
	"notes.md":    "# notes\nalpha again\n",
	"empty.txt":   "",
	"img/dot.png": string(agenttest.ImagePixels),
	"nb.ipynb":    `{"cells":[{"cell_type":"code","id":"c1","metadata":{},"outputs":[],"execution_count":null,"source":"x = 1"},{"cell_type":"markdown","id":"m1","metadata":{},"source":"# hi"}],"metadata":{},"nbformat":4,"nbformat_minor":5}`,
}

// conformance holds the agent.Tool contract cases of every built-in. A
// built-in registered without an entry here fails the test, so a new tool
// cannot skip the suite.
var conformance = map[string]agenttest.ToolCases{
	// The conversation tools run against fakeConversation.
	"compress": {
		ReadOnly: true,
		Valid:    []string{`{"from":"known words"}`, `{"from":"known words","to":"later words","focus":"the API"}`},
		Invalid:  []string{`{}`, `{"from":""}`, `{"from":"unknown words"}`, `{"from":1}`},
	},
	"tool_result": {
		ReadOnly: true,
		Valid:    []string{`{"tool_call_id":"call_1"}`, `{"tool_call_id":"call_1","offset":3,"limit":2}`},
		Invalid:  []string{`{}`, `{"tool_call_id":"call_9"}`, `{"tool_call_id":"call_1","offset":-1}`, `{"tool_call_id":"call_1","limit":30000}`, `{"tool_call_id":"call_1","offset":999}`},
	},
	"bash": {
		Valid:    []string{`{"command":"echo hi"}`, `{"command":"exit 3"}`, `{"command":"sleep 60","run_in_background":true}`},
		Invalid:  []string{`{}`, `{"command":""}`, `{"cmd":"ls"}`, `{"command":"true","timeout_seconds":"5"}`},
		Blocking: `{"command":"sleep 60"}`,
	},
	"code_index": {
		ReadOnly: true,
		Valid:    []string{`{"name":"F"}`, `{"kind":"func","path":"d"}`, `{}`, `{"name":"nothing-here"}`, `{"glob":"*.md","kind":"heading"}`},
		Invalid:  []string{`{"kind":"bogus"}`, `{"max_results":-1}`, `{"path":"missing"}`, `{"name":7}`},
	},
	"delete_range": {
		Valid:   []string{`{"path":"a.txt","start_line":1,"end_line":1}`, `{"path":"notes.md","start_line":1,"end_line":2}`},
		Invalid: []string{`{"path":"a.txt","start_line":2,"end_line":9}`, `{"path":"a.txt","start_line":0,"end_line":1}`, `{"path":"a.txt"}`},
	},
	"delete_symbol": {
		Valid:   []string{`{"path":"d/e/f.go","symbol":"F"}`},
		Invalid: []string{`{"path":"d/e/f.go","symbol":"Missing"}`, `{"path":"a.txt","symbol":"x"}`, `{"path":"d/e/f.go"}`},
	},
	// The memory and history tools run on agenttest's fakes (testEnv);
	// forget's cases start with mem_1 remembered.
	"remember": {
		Valid:   []string{`{"text":"tests run with make check"}`, `{"text":"answers in English","scope":"user"}`},
		Invalid: []string{`{}`, `{"text":"  "}`, `{"text":"x","scope":"team"}`, `{"text":7}`},
	},
	"forget": {
		Valid:   []string{`{"id":"mem_1"}`},
		Invalid: []string{`{}`, `{"id":" "}`, `{"id":"mem_9"}`},
	},
	"memory": {
		ReadOnly: true,
		Valid:    []string{`{}`, `{"query":"make check"}`, `{"limit":50}`},
		Invalid:  []string{`{"limit":-1}`, `{"limit":51}`, `{"query":7}`},
	},
	"list_sessions": {
		ReadOnly: true,
		Valid:    []string{`{}`, `{"before":"t_2","limit":1}`},
		Invalid:  []string{`{"limit":51}`, `{"before":1}`},
	},
	"read_session": {
		ReadOnly: true,
		Valid:    []string{`{"id":"t_1"}`, `{"id":"t_1","offset":1,"limit":1}`},
		Invalid:  []string{`{}`, `{"id":"t_9"}`, `{"id":"t_1","offset":-1}`},
	},
	"history": {
		ReadOnly: true,
		Valid:    []string{`{"query":"flaky"}`, `{"query":"nothing-here"}`},
		Invalid:  []string{`{}`, `{"query":" "}`, `{"query":"x","limit":21}`},
	},
	// The skill tools run on agenttest's fake (testSkills): review is
	// inline, explorer a sub-agent.
	"read_skill": {
		ReadOnly: true,
		Valid:    []string{`{"name":"review"}`, `{"name":"/explorer"}`},
		Invalid:  []string{`{}`, `{"name":" "}`, `{"name":"nope"}`, `{"name":7}`, `{"name":"review","x":1}`},
	},
	"run_skill": {
		Valid:   []string{`{"name":"review","arguments":"pkg/foo"}`, `{"name":"review"}`, `{"name":"explorer","arguments":"map the store"}`},
		Invalid: []string{`{}`, `{"name":"nope"}`, `{"name":"explorer"}`, `{"name":"explorer","arguments":"  "}`, `{"name":"review","arguments":7}`},
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
	"notebook_edit": {
		Valid: []string{`{"path":"nb.ipynb","cell_index":0,"new_source":"x = 2"}`, `{"path":"nb.ipynb","edit_mode":"insert","cell_type":"markdown","new_source":"more"}`,
			`{"path":"nb.ipynb","edit_mode":"delete","cell_id":"m1"}`},
		Invalid: []string{`{}`, `{"path":"nb.ipynb"}`, `{"path":"a.txt","cell_index":0,"new_source":"x"}`, `{"path":"nb.ipynb","cell_index":7,"new_source":"x"}`,
			`{"path":"nb.ipynb","cell_index":"0","new_source":"x"}`, `{"path":"../outside","cell_index":0,"new_source":"x"}`},
	},
	"present": {
		ReadOnly: true,
		Valid:    []string{`{"files":[{"path":"a.txt"}]}`, `{"files":[{"path":"notes.md","description":"the notes"},{"path":"d/c.txt"}]}`},
		Invalid:  []string{`{}`, `{"files":[]}`, `{"files":[{"path":"missing.txt"}]}`, `{"files":[{"path":"d"}]}`, `{"files":[{"path":"../outside"}]}`, `{"files":"a.txt"}`},
	},
	"read_file": {
		ReadOnly: true,
		Valid:    []string{`{"path":"a.txt"}`, `{"path":"notes.md","offset":2,"limit":1}`, `{"path":"empty.txt"}`},
		Invalid:  []string{`{}`, `{"path":"missing.txt"}`, `{"path":"a.txt","offset":"ten"}`, `{"path":"../outside"}`},
	},
	"todo_write": {
		ReadOnly: true,
		Valid: []string{`{"todos":[{"content":"read the code","status":"completed"},{"content":"fix it","status":"in_progress"}]}`,
			`{"todos":[]}`, `{"todos":[{"content":"phase","status":"in_progress","steps":[{"content":"a","status":"completed"},{"content":"b","status":"in_progress"}]}]}`},
		Invalid: []string{`{"todos":[{"content":"a"}]}`, `{"todos":[{"content":"a","status":"done"}]}`,
			`{"todos":[{"content":"p","status":"completed","steps":[{"content":"a","status":"pending"}]}]}`},
	},
	// web_fetch's site is a test server conformanceTool maps the name to.
	"web_fetch": {
		Valid:   []string{`{"url":"http://conformance.test/"}`, `{"url":"http://conformance.test/plain"}`},
		Invalid: []string{`{}`, `{"url":"ftp://conformance.test/"}`, `{"url":"http://127.0.0.1:1/"}`, `{"url":1}`},
	},
	// view_image runs as the harness runs it (inHarness), with a context
	// that takes its picture.
	"view_image": {
		ReadOnly: true,
		Valid:    []string{`{"path":"img/dot.png"}`},
		Invalid:  []string{`{}`, `{"path":""}`, `{"path":"a.txt"}`, `{"path":"empty.txt"}`, `{"path":"missing.png"}`, `{"path":"d"}`, `{"path":"../outside.png"}`, `{"path":7}`},
	},
	"write_file": {
		Valid:   []string{`{"path":"new/b.txt","content":"hello\n"}`, `{"path":"a.txt","content":""}`},
		Invalid: []string{`{"path":"a.txt"}`, `{"path":"a.txt","content":7}`, `{"path":"../outside","content":"x"}`},
	},
}

// The lsp tools exist only where gopls is installed (lsp_server.go).
func init() {
	if !goplsFound {
		return
	}
	point := []string{`{"path":"d/e/f.go","line":4,"symbol":"F"}`, `{"path":"d/e/f.go","line":4,"column":6}`}
	bad := []string{`{"path":"a.txt","line":1,"symbol":"alpha"}`, `{"path":"d/e/f.go","line":99,"symbol":"F"}`,
		`{"path":"d/e/f.go","line":4}`, `{"path":"missing.go","line":1,"symbol":"x"}`}
	for _, name := range []string{"lsp_definition", "lsp_references", "lsp_hover"} {
		conformance[name] = agenttest.ToolCases{ReadOnly: true, Valid: point, Invalid: bad}
	}
	conformance["lsp_diagnostics"] = agenttest.ToolCases{ReadOnly: true, Valid: []string{`{"path":"d/e/f.go"}`},
		Invalid: []string{`{}`, `{"path":"a.txt"}`, `{"path":"missing.go"}`}}
}

// conformanceTool builds the built-in name in a workspace holding
// conformanceFiles, with a run's background jobs (job-1 running, for the
// job tools' cases).
func conformanceTool(t *testing.T, name string) (agent.Tool, agent.ToolEnv) {
	env, _ := testEnv(t)
	writeTree(t, env.Workdir, conformanceFiles)
	env.Jobs = agent.NewJobs()
	t.Cleanup(env.Jobs.Close)
	if strings.HasPrefix(name, "lsp_") {
		env.Shell = sandboxStandIn{}
	}
	if name == "forget" || name == "memory" {
		if _, err := env.Memory.Remember(t.Context(), "workspace", "tests run with make check"); err != nil {
			t.Fatal(err)
		}
	}
	if name == "web_fetch" {
		serveWebFetch(t, "conformance.test")
	}
	if name == "job_output" || name == "job_kill" {
		mustCall(t, tool(t, env, "bash"), map[string]any{"command": "sleep 60", "run_in_background": true})
	}
	if name == "view_image" {
		return inHarness{tool(t, env, name)}, env
	}
	if name == "compress" || name == agent.ToolResultTool {
		return inConversation{tool(t, env, name)}, env
	}
	return tool(t, env, name), env
}

// inConversation runs a tool as a run would, with a conversation in its
// context: fakeConversation.
type inConversation struct{ agent.Tool }

func (c inConversation) ReadOnly() bool { return agent.IsReadOnly(c.Tool) }
func (c inConversation) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	return c.Tool.Execute(agent.ContextWithConversation(ctx, fakeConversation{}), args)
}

// fakeConversation knows the requester's "known words", and the result of
// call_1.
type fakeConversation struct{}

func (fakeConversation) Fold(_ context.Context, r agent.FoldRequest) (agent.Compaction, error) {
	if r.From != "known words" {
		return agent.Compaction{}, errors.New("from is in none of the requester's messages")
	}
	return agent.Compaction{Mode: agent.CompactSummary, Folded: 4, BeforeTokens: 900, AfterTokens: 300}, nil
}

func (fakeConversation) ToolResult(id string) (string, error) {
	if id != "call_1" {
		return "", errors.New("no such result")
	}
	return "the full text of call_1", nil
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
