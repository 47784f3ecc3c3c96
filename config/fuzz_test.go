package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzLoad(f *testing.F) {
	if example, err := os.ReadFile(filepath.Join("..", "reasonix.example.toml")); err == nil {
		f.Add(example)
	}
	for _, seed := range []string{
		"",
		minimalProvider,
		modelsFile,
		"default_model = \"p/m\"\n" + minimalProvider,
		"[agent]\ntemperature = 1.5\ngoal_wall_clock = \"1h\"\n",
		"[agent]\nsystem_prompt_file = \"prompt.md\"\n",
		"[[plugins]]\nname = \"x\"\ncommand = \"${A:-b}\"\nargs = [\"${REASONIX_WORKSPACE_ROOT}\"]\n",
		"[[plugins]]\nname = \"x\"\ntype = \"http\"\nurl = \"https://h/${A\"\n",
		"[runner]\napproval_ttl = 5\n",
		"[[workspaces]]\nname = \"w\"\nrepo = \"../r\"\n",
		"[sandbox]\nforbid_read = [\"${HOME}/.ssh\"]\n",
		"x = = 1",
		// type errors in several keys, tables and entries of an array of tables
		"[agent]\nmax_steps = \"x\"\n[[workspaces]]\nname = 1\n[[workspaces]]\nname = [1]\n[runner]\ntask_timeout = []\n",
		"agent = 1\nworkspaces = \"w\"\n[permissions]\nallow = {a = 1}\n",
	} {
		f.Add([]byte(seed))
	}
	env := map[string]string{"A": "a", "HOME": "/home/fuzz", "TOKEN": "t"}
	// One directory for every input: calls within a fuzz worker are
	// sequential, and a fresh directory per input makes fuzzing crawl.
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prompt.md"), []byte("prompt"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, ProjectFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(LoadOptions{
			ProjectDir: dir,
			Home:       filepath.Join(dir, "home"),
			Env:        func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("error lacks the package prefix: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Load returned a config that fails Validate: %v", err)
		}
		if len(c.Providers) > 0 {
			if _, err := c.ResolveModel(""); err != nil {
				t.Fatalf("valid config cannot resolve its default model: %v", err)
			}
		}
	})
}

func FuzzExpand(f *testing.F) {
	for _, seed := range []string{"", "plain", "${A}", "${A:-d}", "${B:-}", "${", "x${A}y${", "${:-}", "${A:-${B}}", "$${A}}", "${REASONIX_WORKSPACE_ROOT}"} {
		f.Add(seed)
	}
	lookup := lookupFrom(map[string]string{"A": "alpha", "E": ""})
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Expand(s, lookup)
		if !strings.Contains(s, "${") {
			if err != nil || out != s {
				t.Fatalf("text without ${ must pass through: %q -> %q, %v", s, out, err)
			}
			return
		}
		if err != nil {
			return
		}
		// Keeping workspace variables must never change anything else.
		kept, err := expand(s, lookup, keepWorkspaceVars)
		if err != nil {
			t.Fatalf("expand with keep failed where Expand succeeded: %v", err)
		}
		if !strings.Contains(s, "${REASONIX_WORKSPACE_ROOT") && !strings.Contains(s, "${CLAUDE_PROJECT_DIR") && kept != out {
			t.Fatalf("keep changed unrelated output: %q vs %q", kept, out)
		}
	})
}

func FuzzMCPJSON(f *testing.F) {
	f.Add([]byte(mcpJSONDoc))
	for _, seed := range []string{"", "{}", "null", "[]", `{"mcpServers": null}`, `{"mcpServers": {"x": {"args": 1}}}`, "{\n\"mcpServers\": {\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		plugins, err := parseMCPJSON("/p/.mcp.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config: /p/.mcp.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for i, p := range plugins {
			if p.Source != "/p/.mcp.json" || (i > 0 && plugins[i-1].Name >= p.Name) {
				t.Fatalf("plugins unsorted or without source: %+v", plugins)
			}
		}
	})
}
