package builtin

import (
	"fmt"
	"strings"
	"testing"
)

func TestCodeIndexFindsDeclarationsAndFollowsEdits(t *testing.T) {
	env, g := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{
		"srv/server.go": "package srv\n\n// Server serves.\ntype Server struct{}\n\nfunc (s *Server) Start() error { return nil }\n",
		"web/app.ts":    "export class App {\n  start() {\n  }\n}\n",
		"secret.py":     "def start_secret():\n    pass\n",
	})
	g.hidden = map[string]bool{"secret.py": true}
	ix := tool(t, env, "code_index")
	out := mustCall(t, ix, map[string]any{"name": "start"})
	for _, want := range []string{"srv/server.go:6 method Server.Start  func (s *Server) Start() error", "web/app.ts:2 method App.start"} {
		if !strings.Contains(out, want) {
			t.Errorf("result lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("a file hidden from readers shows up:\n%s", out)
	}
	if out := mustCall(t, ix, map[string]any{"name": "start", "path": "web"}); strings.Contains(out, "srv/") || !strings.Contains(out, "App.start") {
		t.Errorf("path web:\n%s", out)
	}
	if out := mustCall(t, ix, map[string]any{"kind": "struct", "glob": "*.go"}); !strings.HasPrefix(out, "srv/server.go:4 struct Server") {
		t.Errorf("kind struct:\n%s", out)
	}
	// An edit through the tools is seen by the next query.
	mustCall(t, tool(t, env, "write_file"), map[string]any{"path": "srv/stop.go", "content": "package srv\n\nfunc (s *Server) Stop() {}\n"})
	if out := mustCall(t, ix, map[string]any{"name": "Server.Stop"}); !strings.Contains(out, "srv/stop.go:3 method Server.Stop") {
		t.Errorf("a new file's symbol is not found:\n%s", out)
	}
	if out := mustCall(t, ix, map[string]any{"name": "zzz"}); out != "no symbols match" {
		t.Errorf("no match = %q", out)
	}
}

func TestCodeIndexBoundsItsResult(t *testing.T) {
	env, _ := testEnv(t)
	var b strings.Builder
	b.WriteString("package many\n")
	for i := range 80 {
		fmt.Fprintf(&b, "func Handle%d() {}\n", i)
	}
	writeTree(t, env.Workdir, map[string]string{"many.go": b.String()})
	out := mustCall(t, tool(t, env, "code_index"), map[string]any{"name": "handle"})
	if n := strings.Count(out, "many.go:"); n != 50 || !strings.Contains(out, "[30 more match") {
		t.Errorf("default page: %d lines\n%s", n, out)
	}
	out = mustCall(t, tool(t, env, "code_index"), map[string]any{"name": "handle", "max_results": 5})
	if n := strings.Count(out, "many.go:"); n != 5 || !strings.Contains(out, "[75 more match") {
		t.Errorf("max_results 5: %d lines\n%s", n, out)
	}
}
