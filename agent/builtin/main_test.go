package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// rootGuard confines reads and writes to root after resolving symlinks, and
// hides any path whose base name is in hidden from readers (like the
// policy's forbid_read). It is the test stand-in for the policy package.
type rootGuard struct {
	root   string
	hidden map[string]bool
	// readOnly refuses every write, to see that writers ask for WritePath.
	readOnly bool
}

func (g *rootGuard) resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("guard: %s is not absolute", p)
	}
	// Resolve the deepest existing ancestor, then re-append the rest: a
	// file about to be created has no symlinks of its own yet.
	rest := ""
	cur := filepath.Clean(p)
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			cur = filepath.Join(r, rest)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	rel, err := filepath.Rel(g.root, cur)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%s is outside the workspace", p)
	}
	return cur, nil
}

func (g *rootGuard) ReadPath(p string) (string, error) {
	r, err := g.resolve(p)
	if err != nil {
		return "", err
	}
	if g.hidden[filepath.Base(r)] {
		return "", fmt.Errorf("%s is hidden by policy", p)
	}
	return r, nil
}

func (g *rootGuard) WritePath(p string) (string, error) {
	if g.readOnly {
		return "", errors.New("writes are not allowed")
	}
	return g.resolve(p)
}

// testEnv returns an env confined to a fresh temporary workspace.
func testEnv(t *testing.T) (agent.ToolEnv, *rootGuard) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := &rootGuard{root: dir, hidden: map[string]bool{}}
	return agent.ToolEnv{Workdir: dir, Paths: g, Memory: &agenttest.Memory{}, History: testHistory(), Skills: testSkills(), Vision: true}, g
}

// tool builds the registered built-in name for env.
func tool(t *testing.T, env agent.ToolEnv, name string) agent.Tool {
	t.Helper()
	r := agent.NewToolRegistry()
	if err := r.AddBuiltins(env, []string{name}); err != nil {
		t.Fatal(err)
	}
	tl, ok := r.Get(name)
	if !ok {
		t.Fatalf("tool %s not in registry", name)
	}
	return tl
}

// call runs the tool with args marshalled from v (or used as is when v is a string).
func call(t *testing.T, tl agent.Tool, v any) (string, error) {
	t.Helper()
	var raw []byte
	if s, ok := v.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	return tl.Execute(context.Background(), raw)
}

// mustCall is call that fails the test on an error.
func mustCall(t *testing.T, tl agent.Tool, v any) string {
	t.Helper()
	out, err := call(t, tl, v)
	if err != nil {
		t.Fatalf("%s(%v): %v", tl.Name(), v, err)
	}
	return out
}

// wantErr is call that fails the test unless the error mentions every part.
func wantErr(t *testing.T, tl agent.Tool, v any, parts ...string) {
	t.Helper()
	out, err := call(t, tl, v)
	if err == nil {
		t.Fatalf("%s(%v) = %q, want an error", tl.Name(), v, out)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s(%v) error %q does not mention %q", tl.Name(), v, err, p)
		}
	}
}

// writeTree creates files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testSkills is the skills every test env has: review (inline) and
// explorer (a sub-agent).
func testSkills() *agenttest.Skills {
	return &agenttest.Skills{By: map[string]agent.SkillText{
		"review":   {Name: "review", Description: "Review a change", Body: "Review $ARGUMENTS and list the bugs."},
		"explorer": {Name: "explorer", Description: "Map the code", Subagent: true, Body: "You explore code."},
	}}
}
