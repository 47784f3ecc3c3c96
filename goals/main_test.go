package goals

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// call builds a tool call with JSON arguments.
func call(id, name string, args any) agent.ToolCall {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return agent.ToolCall{ID: id, Name: name, Arguments: string(raw)}
}

func calls(cs ...agent.ToolCall) agenttest.Turn { return agenttest.Turn{ToolCalls: cs} }
func say(s string) agenttest.Turn               { return agenttest.Turn{Text: s} }

// fakeTool is a test tool with a fixed or computed result.
type fakeTool struct {
	name     string
	readOnly bool
	run      func(ctx context.Context, args json.RawMessage) (string, error)
}

func (t *fakeTool) Name() string            { return t.name }
func (t *fakeTool) Description() string     { return "test tool " + t.name }
func (t *fakeTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t *fakeTool) ReadOnly() bool          { return t.readOnly }
func (t *fakeTool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	if t.run == nil {
		return t.name + " ok: " + string(args), nil
	}
	return t.run(ctx, args)
}

// echo is a read-only tool whose result is its arguments: new arguments
// are new results, repeated ones are exact repeats.
func echo() *fakeTool { return &fakeTool{name: "probe", readOnly: true} }

// tools builds a registry of ts.
func tools(t testing.TB, ts ...agent.Tool) *agent.ToolRegistry {
	t.Helper()
	r := agent.NewToolRegistry()
	for _, x := range ts {
		if err := r.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// events collects events safely.
type events struct {
	mu  sync.Mutex
	all []agent.Event
}

func (e *events) observe(ev agent.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) of(typ agent.EventType) []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []agent.Event
	for _, ev := range e.all {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// memStore keeps the last saved state as JSON, like a database would.
type memStore struct {
	mu    sync.Mutex
	saves int
	last  []byte
}

func (m *memStore) SaveGoal(_ context.Context, s *State) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saves++
	m.last = raw
	return nil
}

func (m *memStore) load(t *testing.T) *State {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	st, err := DecodeState(m.last)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// lastUser is the last user message of a request.
func lastUser(r agenttest.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == agent.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

func toolNames(r agenttest.Request) map[string]bool {
	out := map[string]bool{}
	for _, s := range r.Tools {
		out[s.Name] = true
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
