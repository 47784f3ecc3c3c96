package agent

import (
	"encoding/json"
	"strings"
	"sync"
)

// Observed is what a run has seen of its files: for each file a tool read
// or wrote, the version it had then. The file tools that change a file in
// place refuse one whose current version the run has not seen (the model
// would be editing from memory, or from a stale plan, over a change made
// since — by a command, another tool or a teammate's commit), so the model
// reads it again first. One Observed serves all the tools of a run; it is
// safe for concurrent use.
type Observed struct {
	mu   sync.Mutex
	seen map[string]FileVersion
}

// FileVersion identifies one version of a file's content cheaply, without
// reading it: where it lives, its size and its change times. A write
// through any path changes at least the change time.
type FileVersion struct {
	Device, Inode uint64
	Size          int64
	ModTime       int64 // nanoseconds
	ChangeTime    int64 // nanoseconds; 0 where the platform has none
}

// NewObserved returns an empty record.
func NewObserved() *Observed { return &Observed{seen: map[string]FileVersion{}} }

// Saw records that the run has seen path (an absolute, resolved path) at
// version v. A nil Observed records nothing.
func (o *Observed) Saw(path string, v FileVersion) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.seen[path] = v
	o.mu.Unlock()
}

// Seen reports whether the run has seen path, and at which version.
func (o *Observed) Seen(path string) (FileVersion, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.seen[path]
	return v, ok
}

// toolErrorPrefix starts the content of a tool message whose call failed
// (see execute.go).
const toolErrorPrefix = "error: "

// reobservers maps a tool name to how a call of it, found in a resumed
// conversation, records what it saw (RegisterReobserver).
var reobservers = map[string]func(ToolEnv, json.RawMessage){}

// RegisterReobserver registers, for the tool name, how a successful call
// of it in a stored conversation is recorded again when a run resumes that
// conversation (Reobserve). Call it from an init function, like
// RegisterBuiltin.
func RegisterReobserver(name string, f func(env ToolEnv, args json.RawMessage)) {
	reobservers[name] = f
}

// Reobserve records, for a run that resumes history in a new process (after
// an approval, a hand-over or a crash), the files the conversation shows its
// tools reading or writing successfully, at their versions now: the run's
// memory went with the old process, and the model still has what it read in
// its context. What changed a file while the task was stopped was the
// task's own work, so counting it as seen refuses nothing the old run would
// have allowed except a change the model made itself and did not read back.
func Reobserve(env ToolEnv, history []Message) {
	if env.Observed == nil {
		return
	}
	failed := map[string]bool{}
	for _, m := range history {
		if m.Role == RoleTool && strings.HasPrefix(m.Content, toolErrorPrefix) {
			failed[m.ToolCallID] = true
		}
	}
	for _, m := range history {
		for _, c := range m.ToolCalls {
			if f := reobservers[c.Name]; f != nil && !failed[c.ID] {
				f(env, json.RawMessage(c.Arguments))
			}
		}
	}
}
