package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Tool is a capability the model can call. Execute parses args itself; an
// error is reported back to the model (so it can correct itself) and never
// ends the run. Implementations must be safe for concurrent use.
type Tool interface {
	Name() string
	Description() string
	Schema() json.RawMessage // JSON Schema of the arguments object
	Execute(ctx context.Context, args json.RawMessage) (string, error)
}

// ReadOnlyTool is implemented by tools that never change anything outside
// the process. Read-only calls need no approval by default and may run in
// parallel. A tool without this method is treated as a writer.
type ReadOnlyTool interface {
	ReadOnly() bool
}

// IsReadOnly reports whether t declares itself read-only.
func IsReadOnly(t Tool) bool {
	ro, ok := t.(ReadOnlyTool)
	return ok && ro.ReadOnly()
}

// ToolRegistry is the set of tools one run may call. It is safe for
// concurrent use; the zero value is not usable, use NewToolRegistry.
type ToolRegistry struct {
	mu      sync.RWMutex
	tools   map[string]Tool
	schemas map[string]json.RawMessage // canonical form, computed once on Add
}

// NewToolRegistry returns an empty registry.
func NewToolRegistry() *ToolRegistry {
	return &ToolRegistry{tools: map[string]Tool{}, schemas: map[string]json.RawMessage{}}
}

// Add inserts t. A duplicate name or an invalid schema is an error.
func (r *ToolRegistry) Add(t Tool) error {
	name := t.Name()
	if name == "" {
		return fmt.Errorf("agent: tool with empty name")
	}
	schema, err := CanonicalSchema(t.Schema())
	if err != nil {
		return fmt.Errorf("agent: tool %q: %w", name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[name]; dup {
		return fmt.Errorf("agent: tool %q added twice", name)
	}
	r.tools[name] = t
	r.schemas[name] = schema
	return nil
}

// Get returns the tool called name.
func (r *ToolRegistry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names lists the tool names in sorted order.
func (r *ToolRegistry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Schemas describes every tool to the model, sorted by name so the request
// prefix stays byte-stable across turns (prompt caches depend on it).
func (r *ToolRegistry) Schemas() []ToolSchema {
	names := r.Names()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]ToolSchema, 0, len(names))
	for _, n := range names {
		out = append(out, ToolSchema{Name: n, Description: r.tools[n].Description(), Parameters: r.schemas[n]})
	}
	return out
}

// CanonicalSchema validates a JSON Schema object and returns it compacted
// with object keys sorted, so equal schemas are equal bytes.
func CanonicalSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage(`{"properties":{},"type":"object"}`), nil
	}
	// Every session registers the same built-in schemas: decoding and
	// re-encoding them was a third of a session's setup CPU. A valid
	// schema's canonical form is remembered (a bounded number of them) and
	// handed out as a copy, so no caller shares another's bytes.
	if c, ok := canonicalSchemas.Load(string(raw)); ok {
		return bytes.Clone(c.([]byte)), nil
	}
	out, err := canonicalSchema(raw)
	if err == nil && canonicalCount.Add(1) <= maxCanonicalSchemas {
		canonicalSchemas.Store(string(raw), bytes.Clone(out))
	}
	return out, err
}

// canonicalSchemas maps a schema as given to its canonical form; at most
// maxCanonicalSchemas are kept (MCP servers may bring many).
var (
	canonicalSchemas sync.Map
	canonicalCount   atomic.Int64
)

const maxCanonicalSchemas = 1024

func canonicalSchema(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema must be a JSON object")
	}
	if t, _ := obj["type"].(string); t != "object" {
		return nil, fmt.Errorf("schema type must be \"object\", got %v", obj["type"])
	}
	// encoding/json writes map keys in sorted order, which is the canonical form.
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MaxToolResult is the most of a tool result the model sees.
const MaxToolResult = 32 * 1024

// ToolResultTool is the built-in that pages through a bounded result's full
// text (Conversation.ToolResult). When a run has it, a bounded result ends
// with a line naming it and the call.
const ToolResultTool = "tool_result"

// BoundResult cuts s to at most limit bytes (on a UTF-8 boundary), keeping the
// head and the tail, and says in the middle how much was left out. A result
// that fits is returned unchanged.
func BoundResult(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const markerRoom = 128 // the marker below with three 20-digit numbers fits
	if limit < 2*markerRoom {
		return validPrefix(s[:limit])
	}
	keep := limit - markerRoom
	head := validPrefix(s[:keep*2/3])
	tail := validSuffix(s[len(s)-(keep-len(head)):])
	cut := len(s) - len(head) - len(tail)
	return head + fmt.Sprintf("\n\n[... %d bytes cut: the result was %d bytes, %d are shown ...]\n\n",
		cut, len(s), len(head)+len(tail)) + tail
}

func validPrefix(s string) string {
	for i := 0; i < 4 && len(s) > 0 && !utf8ValidEnd(s); i++ {
		s = s[:len(s)-1]
	}
	return s
}

func validSuffix(s string) string {
	for i := 0; i < 4 && len(s) > 0 && isContinuation(s[0]); i++ {
		s = s[1:]
	}
	return s
}

func isContinuation(b byte) bool { return b&0xC0 == 0x80 }

// utf8ValidEnd reports whether s does not end inside a multi-byte rune.
func utf8ValidEnd(s string) bool {
	// Walk back over continuation bytes to the lead byte and check the length fits.
	n := 0
	for i := len(s) - 1; i >= 0 && n < 4; i-- {
		b := s[i]
		n++
		if !isContinuation(b) {
			var need int
			switch {
			case b < 0x80:
				need = 1
			case b&0xE0 == 0xC0:
				need = 2
			case b&0xF0 == 0xE0:
				need = 3
			default:
				need = 4
			}
			return n == need
		}
	}
	return true
}

// ToolEnv is what a built-in tool needs to know about the run it serves.
type ToolEnv struct {
	// Workdir is the absolute workspace directory; relative paths resolve against it.
	Workdir string
	// BashTimeoutSeconds caps one shell command; 0 means no tool-local cap.
	BashTimeoutSeconds int
	// Paths confines file access. Nil confines writes to Workdir and reads nowhere.
	Paths PathGuard
	// Shell wraps shell commands, e.g. in an OS sandbox. Nil runs them directly.
	Shell ShellWrapper
	// ShellEnv is the environment of shell commands, "KEY=value" entries.
	// Nil inherits the process environment; callers running a service pass a
	// filtered copy so commands the model writes cannot read provider keys.
	ShellEnv []string
	// Emit receives events a tool raises itself (a plan update). Nil drops them.
	Emit func(Event)
	// Observed is what the run has read and written of its files; the tools
	// that change a file in place refuse one whose current version is not
	// in it. Nil turns that protection off.
	Observed *Observed
	// Jobs holds the run's background jobs; its owner closes it when the
	// run ends. Nil: bash runs in the foreground only.
	Jobs *Jobs
	// Memory backs remember, forget and memory; nil leaves them out of
	// the run (a factory returns nil, see AddBuiltins).
	Memory Memory
	// History backs list_sessions, read_session and history; nil leaves
	// them out of the run.
	History History
	// Skills backs read_skill and run_skill; nil leaves them out of the
	// run.
	Skills Skills
	// Vision says the run's model takes images; without it view_image is
	// left out of the run, so a text-only model is never shown one.
	Vision bool
	// Files, when set, does the final read and write of the text-file
	// tools (read_file and the editing tools) instead of the disk: an
	// editor's buffers over ACP. Every check before it is unchanged
	// (confinement, forbid_read, read-before-write, the binary refusal);
	// nil reads and writes the disk.
	Files FileIO
}

// FileIO reads and writes whole text files for the file tools, e.g.
// through an editor that holds unsaved buffers. path is absolute and was
// already confined by the tool. It must honour ctx.
type FileIO interface {
	ReadText(ctx context.Context, path string) (string, error)
	WriteText(ctx context.Context, path, text string) error
}

// PathGuard resolves a path a tool is about to touch to its absolute,
// symlink-free form, or refuses it with an error the model can read.
type PathGuard interface {
	ReadPath(path string) (string, error)
	WritePath(path string) (string, error)
}

// ShellWrapper turns a shell script into the argv that runs it, for example
// inside a sandbox. It returns an error when the script must not run at all.
type ShellWrapper interface {
	WrapShell(workdir, script string) ([]string, error)
}

// ShellStarter is an optional ShellWrapper behaviour: it starts a prepared
// `bash -c SCRIPT` command itself — for example from an OS thread the
// sandbox already confines — instead of wrapping the argv in a helper
// process, which costs a process start per call. The bash tool prefers it.
// An error means the command must not run.
type ShellStarter interface {
	StartShell(cmd *exec.Cmd) error
}

// ShellContained is an optional ShellWrapper behaviour: Contained reports
// that whatever a wrapped command starts dies with the command's first
// process and with the service (a pid namespace whose init dies with its
// parent), so a crash leaves nothing running for a restarted service to
// find. The bash tool then reports no process (ReportProcess), which saves
// the runner a journal write per command.
type ShellContained interface {
	Contained() bool
}

// ShellRefusals is an optional ShellWrapper behaviour: the OS sandbox
// refused calls of a command's processes one by one (an exec a deny rule
// names, a socket outside) and reports them, one line each, for the
// command's result. pid is the process the command started as; taking
// the refusals forgets them.
type ShellRefusals interface {
	TakeRefusals(pid int) []string
}

// ToolFactory builds a built-in tool for one run. It returns nil when env
// lacks what the tool needs (a run without a store has no memory), and the
// tool is then left out of the run.
type ToolFactory func(env ToolEnv) Tool

var (
	builtinsMu sync.Mutex
	builtins   = map[string]ToolFactory{}
)

// RegisterBuiltin makes a built-in tool available to every run. It is meant
// for init functions and panics on a duplicate name.
func RegisterBuiltin(name string, f ToolFactory) {
	builtinsMu.Lock()
	defer builtinsMu.Unlock()
	if _, dup := builtins[name]; dup {
		panic(fmt.Sprintf("agent: built-in tool %q registered twice", name))
	}
	builtins[name] = f
}

// Builtins lists the registered built-in tool names in sorted order.
func Builtins() []string {
	builtinsMu.Lock()
	defer builtinsMu.Unlock()
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AddBuiltins adds the built-ins named in enabled (all of them when enabled is
// empty) to r, built for env. An unknown name is an error listing the known ones.
func (r *ToolRegistry) AddBuiltins(env ToolEnv, enabled []string) error {
	names := enabled
	if len(names) == 0 {
		names = Builtins()
	}
	known := Builtins()
	builtinsMu.Lock()
	factories := make([]ToolFactory, 0, len(names))
	for _, n := range names {
		f, ok := builtins[n]
		if !ok {
			builtinsMu.Unlock()
			return fmt.Errorf("agent: unknown built-in tool %q (known: %s)", n, strings.Join(known, ", "))
		}
		factories = append(factories, f)
	}
	builtinsMu.Unlock()
	for _, f := range factories {
		t := f(env)
		if t == nil {
			continue
		}
		if err := r.Add(t); err != nil {
			return err
		}
	}
	return nil
}
