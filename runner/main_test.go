package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/builtin" // the built-in tools tasks use
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// River's and pgx's pools may leave a background goroutine for a moment after Close.
		goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"),
		goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener"),
	)
}

// router is a provider that answers each task from its own script, chosen
// by the task's prompt (the first user message), so concurrent tasks do not
// consume each other's turns.
type router struct {
	mu      sync.Mutex
	scripts map[string]*agenttest.ScriptedProvider
}

func newRouter() *router { return &router{scripts: map[string]*agenttest.ScriptedProvider{}} }

func (r *router) script(prompt string, turns ...agenttest.Turn) *agenttest.ScriptedProvider {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := agenttest.NewScriptedProvider(turns...)
	r.scripts[prompt] = p
	return p
}

func (r *router) Name() string { return "router" }

func (r *router) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			r.mu.Lock()
			p := r.scripts[m.Content]
			r.mu.Unlock()
			if p == nil {
				return nil, fmt.Errorf("router: no script for %q", m.Content)
			}
			return p.Stream(ctx, req)
		}
	}
	return nil, fmt.Errorf("router: no user message")
}

func call(id, tool string, args any) agent.ToolCall {
	b, _ := json.Marshal(args)
	return agent.ToolCall{ID: id, Name: tool, Arguments: string(b)}
}

func calls(cs ...agent.ToolCall) agenttest.Turn { return agenttest.Turn{ToolCalls: cs} }

func answer(text string) agenttest.Turn {
	return agenttest.Turn{Text: text, Usage: agent.Usage{Prompt: 100, Completion: 10}}
}

// toolResult finds the tool message answering callID in the last request
// the provider got.
func toolResult(p *agenttest.ScriptedProvider, callID string) string {
	reqs := p.Requests()
	if len(reqs) == 0 {
		return ""
	}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == agent.RoleTool && m.ToolCallID == callID {
			return m.Content
		}
	}
	return ""
}

// clock is a settable clock for deadlines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
