package session

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"

	"reasonix/agent"
	"reasonix/agent/recipe"
)

// DirInstructions reads the instruction files (recipe.InstructionPaths) of
// repository directories, slash-separated and relative to the workspace
// root: the service's from the task's base commit, `run`'s from the
// checkout.
type DirInstructions func(ctx context.Context, dirs []string) ([]recipe.File, error)

// EventInstructions names instruction files a run follows: Data is
// {"files": [recipe.InstructionFile], "for": path} for the files of the
// directories on the way to a file a tool touched.
const EventInstructions agent.EventType = "instructions"

// maxNestedInstructionBytes bounds the instructions one tool result gains.
const maxNestedInstructionBytes = 16 << 10

// instructionTools are the tools whose path names a file the task works
// on, and whose result carries the instruction files of the directories
// on the way to it the first time one is touched.
var instructionTools = map[string]bool{"read_file": true, "write_file": true, "edit_file": true, "multi_edit": true}

// nestedInstructions remembers which directories' instruction files a
// session has already handed to the model. A directory's files go into
// the result of the first call that touches a file below it, never into
// the system prompt, which stays byte-identical for the prompt cache.
type nestedInstructions struct {
	read    DirInstructions
	workdir string
	emit    agent.Observer
	mu      sync.Mutex
	seen    map[string]bool
}

type nestedTool struct {
	agent.Tool
	n *nestedInstructions
}

func (t nestedTool) ReadOnly() bool { return agent.IsReadOnly(t.Tool) }

func (t nestedTool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	out, err := t.Tool.Execute(ctx, args)
	if err != nil {
		return out, err
	}
	return out + t.n.attach(ctx, args), nil
}

// attach returns the instructions of the directories on the way to the
// call's path not attached before, as text to append ("" for none).
func (n *nestedInstructions) attach(ctx context.Context, args json.RawMessage) string {
	var a struct {
		Path     string `json:"path"`
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	p := a.Path
	if p == "" {
		p = a.FilePath
	}
	if p == "" {
		return ""
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(n.workdir, p)
		if err != nil {
			return ""
		}
		p = rel
	}
	rel := filepath.ToSlash(p)
	var dirs []string
	n.mu.Lock()
	for _, d := range recipe.InstructionDirs(rel) {
		if !n.seen[d] {
			n.seen[d] = true
			dirs = append(dirs, d)
		}
	}
	n.mu.Unlock()
	if len(dirs) == 0 {
		return ""
	}
	files, err := n.read(ctx, dirs)
	if err != nil || len(files) == 0 {
		return ""
	}
	ins := recipe.LoadInstructions(maxNestedInstructionBytes, recipe.Layer{Scope: recipe.ScopeProject, Files: files})
	if n.emit != nil && len(ins.Files) > 0 {
		n.emit(agent.Event{Type: EventInstructions, Data: map[string]any{"files": ins.Files, "for": rel}})
	}
	return ins.Text
}

// nestTools wraps the file tools of reg with n.
func nestTools(reg *agent.ToolRegistry, n *nestedInstructions) (*agent.ToolRegistry, error) {
	out := agent.NewToolRegistry()
	for _, name := range reg.Names() {
		t, _ := reg.Get(name)
		if instructionTools[name] {
			t = nestedTool{Tool: t, n: n}
		}
		if err := out.Add(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}
