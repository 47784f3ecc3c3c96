package builtin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"reasonix/agent"
	"reasonix/internal/codeindex"
)

const (
	codeIndexDefaultMax = 50
	codeIndexHardMax    = 500
)

// codeIndexKinds are the kinds a query may select.
var codeIndexKinds = []string{"func", "method", "type", "struct", "interface", "class", "enum", "trait", "const", "var", "module", "macro", "heading"}

func init() {
	agent.RegisterBuiltin("code_index", func(env agent.ToolEnv) agent.Tool { return &codeIndex{env: env} })
}

// codeIndex finds declarations by name across the workspace, from an
// index kept per workspace and refreshed file by file as files change.
type codeIndex struct{ env agent.ToolEnv }

var _ agent.ReadOnlyTool = (*codeIndex)(nil)

func (*codeIndex) Name() string   { return "code_index" }
func (*codeIndex) ReadOnly() bool { return true }
func (*codeIndex) Description() string {
	return "Find where functions, methods, types, classes, constants and variables are declared, by name, in the workspace's " +
		"Go (parsed), Python, JavaScript/TypeScript, Rust, Java, C#, Kotlin, Swift, Scala, C/C++, Ruby, PHP, Lua and shell files, " +
		"and Markdown headings. Prints path:line kind Container.Name and the declaring line, best matches first (exact, then " +
		"prefix, then substring, ignoring case). Faster and more precise than grep for \"where is X defined\"; " +
		"non-Go languages are read line by line, so treat their results as leads."
}

func (*codeIndex) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "Name or part of it, e.g. \"Execute\" or \"grep.Execute\" (Container.Name). Empty: every symbol the other filters select."},
    "kind": {"type": "string", "enum": ["func", "method", "type", "struct", "interface", "class", "enum", "trait", "const", "var", "module", "macro", "heading"], "description": "Only this kind; func also selects methods."},
    "path": {"type": "string", "description": "Only in this file or directory, relative to the workspace or absolute. Default: the workspace."},
    "glob": {"type": "string", "description": "Only in files whose name matches, e.g. \"*.go\"; a pattern with / matches the path below path."},
    "max_results": {"type": "integer", "minimum": 1, "description": "Most symbols to list. Default 50, at most 500."}
  },
  "additionalProperties": false
}`)
}

type codeIndexArgs struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	MaxResults int    `json:"max_results"`
}

func (t *codeIndex) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var a codeIndexArgs
	if err := decodeArgs("code_index", raw, &a); err != nil {
		return "", err
	}
	if a.MaxResults < 0 {
		return "", fmt.Errorf("code_index: max_results must be 1 or more, got %d", a.MaxResults)
	}
	if a.Kind != "" && !slices.Contains(codeIndexKinds, a.Kind) {
		return "", fmt.Errorf("code_index: unknown kind %q (known: %s)", a.Kind, strings.Join(codeIndexKinds, ", "))
	}
	root, err := readPath("code_index", t.env, ".")
	if err != nil {
		return "", err
	}
	base, err := readPath("code_index", t.env, cmp.Or(a.Path, "."))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(base); err != nil {
		return "", fmt.Errorf("code_index: %s: %w", cmp.Or(a.Path, "."), err)
	}
	under, err := filepath.Rel(root, base)
	if err != nil || !filepath.IsLocal(under) && under != "." {
		return "", fmt.Errorf("code_index: %s is outside the workspace", a.Path)
	}
	under = filepath.ToSlash(under)
	var filter *globPattern
	if a.Glob != "" {
		if filter, err = compileGlob(filepath.ToSlash(a.Glob)); err != nil {
			return "", fmt.Errorf("code_index: glob: %w", err)
		}
	}
	keep := func(rel string) bool {
		below := rel
		if under != "." {
			if rel != under && !strings.HasPrefix(rel, under+"/") {
				return false
			}
			below = strings.TrimPrefix(strings.TrimPrefix(rel, under), "/")
		}
		if filter == nil {
			return true
		}
		if !strings.Contains(a.Glob, "/") {
			below = filepath.Base(below)
		}
		return filter.match(cmp.Or(below, filepath.Base(rel)))
	}
	limit := min(cmp.Or(a.MaxResults, codeIndexDefaultMax), codeIndexHardMax)
	// The index is shared by the runs of one workspace and knows nothing
	// of this run's policy: what the guard hides from readers is dropped
	// here, and asked for with room to spare so the page still fills.
	syms, total, err := codeindex.For(root).Find(ctx, codeindex.Query{Name: strings.TrimSpace(a.Name), Kind: a.Kind, Keep: keep, Limit: limit + 50})
	if err != nil {
		return "", fmt.Errorf("code_index: %w", err)
	}
	var b strings.Builder
	shown := 0
	for _, s := range syms {
		if shown == limit {
			break
		}
		if !visible(t.env, filepath.Join(root, filepath.FromSlash(s.Path))) {
			total--
			continue
		}
		shown++
		fmt.Fprintf(&b, "%s:%d %s %s  %s\n", s.Path, s.Line, s.Kind, s.Qualified(), s.Text)
	}
	if shown == 0 {
		return "no symbols match", nil
	}
	if total > shown {
		fmt.Fprintf(&b, "\n[%d more match; narrow name, kind, path or glob, or raise max_results]", total-shown)
	}
	return b.String(), nil
}
