package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"reasonix/agent"
)

// script is an in-memory provider: each request gets the next reply.
type script struct {
	mu       sync.Mutex
	replies  []func(agent.Request) []agent.Chunk
	requests []agent.Request
}

func (s *script) Name() string { return "script" }

func (s *script) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	if len(s.replies) == 0 {
		s.mu.Unlock()
		return nil, errors.New("script exhausted")
	}
	next := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	ch := make(chan agent.Chunk, 16)
	go func() {
		defer close(ch)
		for _, c := range next(req) {
			select {
			case ch <- c:
			case <-ctx.Done():
				ch <- agent.Chunk{Type: agent.ChunkError, Err: ctx.Err()}
				return
			}
		}
	}()
	return ch, nil
}

func say(text string) func(agent.Request) []agent.Chunk {
	return func(agent.Request) []agent.Chunk {
		return []agent.Chunk{
			{Type: agent.ChunkText, Text: text[:len(text)/2]},
			{Type: agent.ChunkText, Text: text[len(text)/2:]},
			{Type: agent.ChunkUsage, Usage: agent.Usage{Prompt: 10, Completion: 5, Cached: 2}},
			{Type: agent.ChunkDone, FinishReason: "stop"},
		}
	}
}

func callTools(calls ...agent.ToolCall) func(agent.Request) []agent.Chunk {
	return func(agent.Request) []agent.Chunk {
		out := []agent.Chunk{}
		for i := range calls {
			out = append(out, agent.Chunk{Type: agent.ChunkToolCall, ToolCall: &calls[i]})
		}
		return append(out, agent.Chunk{Type: agent.ChunkUsage, Usage: agent.Usage{Prompt: 7, Completion: 3}},
			agent.Chunk{Type: agent.ChunkDone, FinishReason: "tool_calls"})
	}
}

// fakeTool runs fn; readOnly marks it a reader.
type fakeTool struct {
	name     string
	readOnly bool
	fn       func(ctx context.Context, args json.RawMessage) (string, error)
}

func (f *fakeTool) Name() string        { return f.name }
func (f *fakeTool) Description() string { return "test tool " + f.name }
func (f *fakeTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (f *fakeTool) ReadOnly() bool { return f.readOnly }
func (f *fakeTool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	return f.fn(ctx, args)
}

func registry(t *testing.T, tools ...agent.Tool) *agent.ToolRegistry {
	t.Helper()
	r := agent.NewToolRegistry()
	for _, tool := range tools {
		if err := r.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

var allowAll = agent.GateFunc(func(context.Context, agent.Call) (agent.Verdict, error) { return agent.Allow, nil })

func newAgent(t *testing.T, cfg agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRunPlainAnswer(t *testing.T) {
	p := &script{replies: []func(agent.Request) []agent.Chunk{say("hello world")}}
	var deltas strings.Builder
	a := newAgent(t, agent.Config{Provider: p, SystemPrompt: "be brief", Observer: func(e agent.Event) {
		if e.Type == agent.EventTextDelta {
			deltas.WriteString(e.Text)
		}
	}})
	res := a.Run(context.Background(), "hi")
	if res.Outcome != agent.OutcomeSucceeded || res.FinalAnswer != "hello world" || res.Steps != 1 {
		t.Fatalf("result = %+v", res)
	}
	if deltas.String() != "hello world" {
		t.Errorf("streamed %q", deltas.String())
	}
	if res.Usage != (agent.Usage{Prompt: 10, Completion: 5, Cached: 2}) {
		t.Errorf("usage = %+v", res.Usage)
	}
	req := p.requests[0]
	if req.Messages[0].Role != agent.RoleSystem || req.Messages[0].Content != "be brief" || req.Messages[1].Content != "hi" {
		t.Errorf("request messages = %+v", req.Messages)
	}
}

func TestRunToolLoopFeedsResultsBack(t *testing.T) {
	var got []string
	echo := &fakeTool{name: "echo", fn: func(_ context.Context, args json.RawMessage) (string, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		got = append(got, a.Text)
		return "echo:" + a.Text, nil
	}}
	p := &script{replies: []func(agent.Request) []agent.Chunk{
		callTools(agent.ToolCall{ID: "c1", Name: "echo", Arguments: `{"text":"one"}`}),
		callTools(agent.ToolCall{ID: "c2", Name: "echo", Arguments: `{"text":"two"}`}),
		say("done"),
	}}
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, echo), Gate: allowAll})
	res := a.Run(context.Background(), "go")
	if res.Outcome != agent.OutcomeSucceeded || res.Steps != 3 || res.ToolCalls != 2 || res.FinalAnswer != "done" {
		t.Fatalf("result = %+v", res)
	}
	if strings.Join(got, ",") != "one,two" {
		t.Errorf("tool saw %v", got)
	}
	last := p.requests[2].Messages
	tm := last[len(last)-1]
	if tm.Role != agent.RoleTool || tm.ToolCallID != "c2" || tm.Content != "echo:two" {
		t.Errorf("last message = %+v", tm)
	}
	if len(p.requests[0].Tools) != 1 || p.requests[0].Tools[0].Name != "echo" {
		t.Errorf("tools sent = %+v", p.requests[0].Tools)
	}
	if res.Usage.Prompt != 7+7+10 {
		t.Errorf("usage not summed: %+v", res.Usage)
	}
}

func TestRunBadCallsGoBackToTheModel(t *testing.T) {
	ran := 0
	w := &fakeTool{name: "w", fn: func(context.Context, json.RawMessage) (string, error) { ran++; return "", errors.New("disk full") }}
	boom := &fakeTool{name: "boom", fn: func(context.Context, json.RawMessage) (string, error) { panic("kaboom") }}
	p := &script{replies: []func(agent.Request) []agent.Chunk{
		callTools(
			agent.ToolCall{ID: "a", Name: "nope", Arguments: `{}`},
			agent.ToolCall{ID: "b", Name: "w", Arguments: `{"x":`},
			agent.ToolCall{ID: "c", Name: "w", Arguments: ``},
			agent.ToolCall{ID: "d", Name: "boom", Arguments: `{}`},
		),
		say("ok"),
	}}
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, w, boom), Gate: allowAll})
	res := a.Run(context.Background(), "go")
	if res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("tool errors must not end the run: %+v", res)
	}
	if ran != 1 {
		t.Errorf("w ran %d times, want 1 (malformed args must not run)", ran)
	}
	msgs := p.requests[1].Messages
	tools := msgs[len(msgs)-4:]
	wants := []string{`unknown tool "nope"`, "not a valid JSON object", "error: disk full", "crashed: kaboom"}
	for i, want := range wants {
		if !strings.Contains(tools[i].Content, want) {
			t.Errorf("result %d = %q, want it to contain %q", i, tools[i].Content, want)
		}
	}
}

func TestRunRefusalBlocksAndSaysWhoRefused(t *testing.T) {
	ran := false
	w := &fakeTool{name: "write", fn: func(context.Context, json.RawMessage) (string, error) { ran = true; return "", nil }}
	p := &script{replies: []func(agent.Request) []agent.Chunk{
		callTools(agent.ToolCall{ID: "a", Name: "write", Arguments: `{}`}),
		say("I could not write"),
	}}
	var refusedEvents int
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, w), Observer: func(e agent.Event) {
		if e.Type == agent.EventToolRefused {
			refusedEvents++
		}
	}}) // nil gate: ReadOnlyGate
	res := a.Run(context.Background(), "go")
	if ran {
		t.Fatal("a refused writer ran")
	}
	if res.Outcome != agent.OutcomeBlocked || res.RefusedCalls != 1 || !errors.Is(res.Err, agent.ErrRefused) {
		t.Fatalf("result = %+v", res)
	}
	msgs := p.requests[1].Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "nobody could be asked") || strings.Contains(got, "declined") {
		t.Errorf("refusal text = %q", got)
	}
	if refusedEvents != 1 {
		t.Errorf("refused events = %d", refusedEvents)
	}
}

// TestRunReadersInParallelWritersAlone runs in a synctest bubble, so the
// writers' sleep moves a fake clock: had the two writers run at once, both
// would be inside it before the clock moved, and the overlap is seen every
// time rather than when the scheduler happens to interleave them.
func TestRunReadersInParallelWritersAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Two readers each wait for the other to start: they only finish when run concurrently.
		var arrived sync.WaitGroup
		arrived.Add(2)
		both := make(chan struct{})
		go func() { arrived.Wait(); close(both) }()
		reader := func(name string) *fakeTool {
			return &fakeTool{name: name, readOnly: true, fn: func(ctx context.Context, _ json.RawMessage) (string, error) {
				arrived.Done()
				select {
				case <-both:
					return name, nil
				case <-time.After(10 * time.Second):
					return "", errors.New("the other reader never started")
				}
			}}
		}
		var active, maxActive atomic.Int32
		writer := func(name string) *fakeTool {
			return &fakeTool{name: name, fn: func(context.Context, json.RawMessage) (string, error) {
				n := active.Add(1)
				defer active.Add(-1)
				if n > maxActive.Load() {
					maxActive.Store(n)
				}
				time.Sleep(5 * time.Millisecond)
				return name, nil
			}}
		}
		p := &script{replies: []func(agent.Request) []agent.Chunk{
			callTools(
				agent.ToolCall{ID: "1", Name: "r1", Arguments: `{}`},
				agent.ToolCall{ID: "2", Name: "r2", Arguments: `{}`},
				agent.ToolCall{ID: "3", Name: "w1", Arguments: `{}`},
				agent.ToolCall{ID: "4", Name: "w2", Arguments: `{}`},
			),
			say("ok"),
		}}
		a := newAgent(t, agent.Config{Provider: p, Gate: allowAll,
			Tools: registry(t, reader("r1"), reader("r2"), writer("w1"), writer("w2"))})
		res := a.Run(context.Background(), "go")
		if res.Outcome != agent.OutcomeSucceeded {
			t.Fatalf("result = %+v", res)
		}
		msgs := p.requests[1].Messages
		for i, want := range []string{"r1", "r2", "w1", "w2"} {
			if m := msgs[len(msgs)-4+i]; m.Content != want || m.ToolCallID != fmt.Sprint(i+1) {
				t.Errorf("result %d = %+v, want %q in call order", i, m, want)
			}
		}
		if maxActive.Load() != 1 {
			t.Errorf("writers overlapped: %d at once", maxActive.Load())
		}
	})
}

func TestRunStepLimit(t *testing.T) {
	loop := &fakeTool{name: "loop", readOnly: true, fn: func(context.Context, json.RawMessage) (string, error) { return "again", nil }}
	var replies []func(agent.Request) []agent.Chunk
	for range 10 {
		replies = append(replies, callTools(agent.ToolCall{ID: "x", Name: "loop", Arguments: `{}`}))
	}
	p := &script{replies: replies}
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, loop), MaxSteps: 3})
	res := a.Run(context.Background(), "go")
	if res.Outcome != agent.OutcomeStepLimit || res.Steps != 3 || !errors.Is(res.Err, agent.ErrStepLimit) {
		t.Fatalf("result = %+v", res)
	}
	if len(p.requests) != 3 {
		t.Errorf("requests = %d", len(p.requests))
	}
}

func TestRunCancelReachesRunningTool(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := &fakeTool{name: "block", fn: func(ctx context.Context, _ json.RawMessage) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	}}
	p := &script{replies: []func(agent.Request) []agent.Chunk{
		callTools(agent.ToolCall{ID: "a", Name: "block", Arguments: `{}`}, agent.ToolCall{ID: "b", Name: "block", Arguments: `{}`}),
		say("never"),
	}}
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, block), Gate: allowAll})
	res := a.Run(ctx, "go")
	if res.Outcome != agent.OutcomeInterrupted || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("result = %+v", res)
	}
	// Every call the model made still has an answer, so the conversation can resume.
	msgs := a.Messages()
	if len(msgs) != 4 || msgs[2].ToolCallID != "a" || msgs[3].ToolCallID != "b" || !strings.Contains(msgs[3].Content, "not run") {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestRunProviderFailure(t *testing.T) {
	pe := &agent.ProviderError{Class: agent.ErrRejected, Status: 401, Message: "bad key"}
	p := &script{replies: []func(agent.Request) []agent.Chunk{func(agent.Request) []agent.Chunk {
		return []agent.Chunk{{Type: agent.ChunkText, Text: "par"}, {Type: agent.ChunkError, Err: pe}}
	}}}
	res := newAgent(t, agent.Config{Provider: p}).Run(context.Background(), "go")
	if res.Outcome != agent.OutcomeFailed || !errors.Is(res.Err, agent.ErrRejected) || agent.Reason(res.Err) != "provider.rejected" {
		t.Fatalf("result = %+v", res)
	}
}

func TestRunGateFailureStopsTheRun(t *testing.T) {
	ran := false
	w := &fakeTool{name: "w", fn: func(context.Context, json.RawMessage) (string, error) { ran = true; return "", nil }}
	p := &script{replies: []func(agent.Request) []agent.Chunk{callTools(agent.ToolCall{ID: "a", Name: "w"}), say("x")}}
	gate := agent.GateFunc(func(context.Context, agent.Call) (agent.Verdict, error) {
		return agent.Verdict{}, errors.New("store down")
	})
	res := newAgent(t, agent.Config{Provider: p, Tools: registry(t, w), Gate: gate}).Run(context.Background(), "go")
	if ran || res.Outcome != agent.OutcomeFailed || !strings.Contains(res.Err.Error(), "store down") {
		t.Fatalf("ran=%v result=%+v", ran, res)
	}
}

func TestTranscriptRoundTrip(t *testing.T) {
	echo := &fakeTool{name: "echo", readOnly: true, fn: func(context.Context, json.RawMessage) (string, error) { return "hi", nil }}
	p := &script{replies: []func(agent.Request) []agent.Chunk{callTools(agent.ToolCall{ID: "a", Name: "echo"}), say("bye")}}
	var buf bytes.Buffer
	tr := agent.NewTranscript(&buf)
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, echo), Observer: tr.Observe})
	a.Run(context.Background(), "go")
	if tr.Err() != nil {
		t.Fatal(tr.Err())
	}
	torn := buf.String() + `{"time":"2026-01-01T00:00:00Z","type":"mess`
	msgs, err := agent.ReadTranscript(strings.NewReader(torn))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(a.Messages())
	got, _ := json.Marshal(msgs)
	if !bytes.Equal(want, got) {
		t.Errorf("rebuilt %s\nwant     %s", got, want)
	}
	if _, err := agent.ReadTranscript(strings.NewReader("{bad\n" + buf.String())); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed line: err = %v", err)
	}
	// A rebuilt agent continues the same conversation.
	p2 := &script{replies: []func(agent.Request) []agent.Chunk{say("again")}}
	b := newAgent(t, agent.Config{Provider: p2, History: msgs})
	b.Run(context.Background(), "more")
	if n := len(p2.requests[0].Messages); n != len(msgs)+1 {
		t.Errorf("continued request has %d messages, want %d", n, len(msgs)+1)
	}
}
