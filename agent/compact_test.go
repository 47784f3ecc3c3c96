package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/openai"
)

// pageTool is a read-only tool whose every call returns a page of text
// naming the call, so a conversation grows by a known amount per step.
type pageTool struct{ size int }

func (pageTool) Name() string        { return "page" }
func (pageTool) Description() string { return "returns page N" }
func (pageTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
}
func (pageTool) ReadOnly() bool { return true }
func (t pageTool) Execute(_ context.Context, args json.RawMessage) (string, error) {
	var a struct{ N int }
	if err := json.Unmarshal(args, &a); err != nil {
		return "", err
	}
	head := fmt.Sprintf("page %d begins.", a.N)
	tail := fmt.Sprintf("page %d ends.", a.N)
	return head + strings.Repeat(" lorem ipsum", max(t.size-len(head)-len(tail), 0)/12) + tail, nil
}

// dumpTool returns its text.
type dumpTool struct{ text string }

func (dumpTool) Name() string            { return "dump" }
func (dumpTool) Description() string     { return "dumps a lot" }
func (dumpTool) Schema() json.RawMessage { return nil }
func (dumpTool) ReadOnly() bool          { return true }
func (t dumpTool) Execute(context.Context, json.RawMessage) (string, error) {
	return t.text, nil
}

func pageCall(n int) agent.ToolCall {
	return agent.ToolCall{ID: fmt.Sprintf("call_%d", n), Name: "page", Arguments: fmt.Sprintf(`{"n":%d}`, n)}
}

const (
	testSystem = "You are a careful test agent."
	testTask   = "TASK-7781: read pages 0 to N and report done."
	testDigest = "## Goal and constraints\nRead every page.\n\n## Done so far\nRead some pages.\n\n## Next steps\nRead the rest."
)

// pagingModel calls page 0, 1, ... steps-1 and then answers "done"; summary
// calls get summary(r). It counts both kinds of request.
type pagingModel struct {
	steps     int
	summary   func(agenttest.Request) agenttest.Turn
	calls     atomic.Int64
	summaries atomic.Int64
}

func (m *pagingModel) turn(r agenttest.Request) agenttest.Turn {
	if agenttest.IsSummary(r) {
		m.summaries.Add(1)
		if m.summary != nil {
			return m.summary(r)
		}
		return agenttest.Turn{Text: testDigest}
	}
	n := int(m.calls.Add(1)) - 1
	if n >= m.steps {
		return agenttest.Turn{Text: "done"}
	}
	return agenttest.Turn{ToolCalls: []agent.ToolCall{pageCall(n)}}
}

type events struct {
	mu  sync.Mutex
	all []agent.Event
}

func (e *events) observe(ev agent.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) compactions() []agent.Compaction {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []agent.Compaction
	for _, ev := range e.all {
		if ev.Type == agent.EventContextCompacted {
			out = append(out, *ev.Compaction)
		}
	}
	return out
}

func newPagingAgent(t *testing.T, p agent.Provider, window, page int, obs agent.Observer, history []agent.Message) *agent.Agent {
	t.Helper()
	tools := agent.NewToolRegistry()
	if err := tools.Add(pageTool{size: page}); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Provider: p, Tools: tools, SystemPrompt: testSystem, MaxSteps: 1000,
		ContextWindow: window, Observer: obs, History: history})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func scripted(m *pagingModel, window, n int) *agenttest.ScriptedProvider {
	p := agenttest.NewScriptedProvider()
	for range n {
		p.Add(agenttest.Respond(agenttest.Windowed(window, m.turn)))
	}
	return p
}

// Below the trigger nothing is rewritten: every request's messages are the
// previous request's messages, byte for byte, plus new ones.
func TestPrefixStableBelowTrigger(t *testing.T) {
	m := &pagingModel{steps: 6}
	srv := agenttest.NewServer(t)
	for range 10 {
		srv.Add(agenttest.Respond(agenttest.Windowed(1_000_000, m.turn)))
	}
	p, err := agent.Providers.New(srv.ProviderConfig())
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	a := newPagingAgent(t, p, 1_000_000, 800, ev.observe, nil)
	if res := a.Run(context.Background(), testTask); res.Outcome != agent.OutcomeSucceeded || res.Steps != 7 {
		t.Fatalf("run: %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d requests, want 7", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		prev, next := rawMessages(t, reqs[i-1].Body), rawMessages(t, reqs[i].Body)
		if len(next) <= len(prev) {
			t.Fatalf("request %d has %d messages after %d", i, len(next), len(prev))
		}
		for k := range prev {
			if !bytes.Equal(prev[k], next[k]) {
				t.Fatalf("request %d rewrote message %d:\n%s\nwas\n%s", i, k, next[k], prev[k])
			}
		}
		// The body up to the end of the earlier messages is a byte prefix.
		cut := bytes.Index(reqs[i-1].Body, prev[len(prev)-1]) + len(prev[len(prev)-1])
		if !bytes.HasPrefix(reqs[i].Body, reqs[i-1].Body[:cut]) {
			t.Fatalf("request %d does not start with request %d's prefix", i, i-1)
		}
	}
	if c := ev.compactions(); len(c) != 0 || m.summaries.Load() != 0 {
		t.Fatalf("compacted below the trigger: %+v", c)
	}
}

func rawMessages(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var b struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Messages
}

// A long run in a small window compacts several times and completes; the
// last request still carries the system prompt, the task and the recent
// tail, and a new agent on the recorded conversation sends the same view.
func TestLongRunCompactsAndCompletes(t *testing.T) {
	const window, steps = 6000, 300
	m := &pagingModel{steps: steps}
	p := scripted(m, window, 2*steps)
	var ev events
	a := newPagingAgent(t, p, window, 600, ev.observe, nil)
	res := a.Run(context.Background(), testTask)
	if res.Outcome != agent.OutcomeSucceeded || res.FinalAnswer != "done" {
		t.Fatalf("run: %+v", res)
	}
	comps := ev.compactions()
	if len(comps) < 3 {
		t.Fatalf("%d compactions, want several", len(comps))
	}
	t.Logf("%d compactions over %d steps; the last: %+v", len(comps), steps, comps[len(comps)-1])
	for _, c := range comps {
		if c.Mode != agent.CompactSummary || c.AfterTokens >= c.BeforeTokens || c.AfterTokens > window/2 || c.Window != window {
			t.Fatalf("compaction %+v", c)
		}
	}
	if got := int(m.summaries.Load()); got != len(comps) {
		t.Fatalf("%d summary calls for %d compactions", got, len(comps))
	}
	reqs := p.Requests()
	last := reqs[len(reqs)-1]
	if agenttest.PromptTokens(last) > window {
		t.Fatalf("last request has %d tokens", agenttest.PromptTokens(last))
	}
	msgs := last.Messages
	if msgs[0].Role != agent.RoleSystem || msgs[0].Content != testSystem || msgs[1].Content != testTask {
		t.Fatalf("last request opens with %q, %q", msgs[0].Content, msgs[1].Content)
	}
	if !strings.Contains(msgs[2].Content, "<context-digest>") || !strings.Contains(msgs[2].Content, "## Done so far") {
		t.Fatalf("third message is not the digest: %.200q", msgs[2].Content)
	}
	tail := msgs[len(msgs)-1]
	if tail.Role != agent.RoleTool || !strings.HasPrefix(tail.Content, fmt.Sprintf("page %d begins.", steps-1)) {
		t.Fatalf("last request ends with %+v", tail)
	}
	// The canonical conversation kept every step.
	conv := a.Messages()
	results, marks := 0, 0
	for _, msg := range conv {
		switch msg.Role {
		case agent.RoleTool:
			results++
		case agent.RoleCheckpoint:
			marks++
		}
	}
	if results != steps || marks != len(comps) || conv[0].Content != testTask {
		t.Fatalf("conversation has %d results and %d checkpoints, want %d and %d", results, marks, steps, len(comps))
	}

	// Restored from the record, the next request repeats the view exactly.
	m2 := &pagingModel{steps: 0}
	p2 := scripted(m2, window, 2)
	b := newPagingAgent(t, p2, window, 600, nil, conv)
	if res := b.Run(context.Background(), "and now?"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("restored run: %+v", res)
	}
	got := p2.Requests()[0].Messages
	want := append(append([]agent.Message(nil), msgs...), agent.Message{Role: agent.RoleAssistant, Content: "done"}, agent.Message{Role: agent.RoleUser, Content: "and now?"})
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) || m2.summaries.Load() != 0 {
		t.Fatalf("restored view differs:\n%.400s\nwant\n%.400s", gj, wj)
	}
}

// A digest that does not fit is not used: a deterministic digest and a
// shorter tail are, and the task stays.
func TestOversizedDigestFallsBack(t *testing.T) {
	const window = 6000
	m := &pagingModel{steps: 40, summary: func(agenttest.Request) agenttest.Turn {
		return agenttest.Turn{Text: "## Done so far\n" + strings.Repeat("everything in great detail. ", 2000)}
	}}
	p := scripted(m, window, 200)
	var ev events
	a := newPagingAgent(t, p, window, 600, ev.observe, nil)
	if res := a.Run(context.Background(), testTask); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("run: %+v", res)
	}
	comps := ev.compactions()
	if len(comps) == 0 {
		t.Fatal("no compaction")
	}
	for _, c := range comps {
		if c.Mode != agent.CompactFallback || !strings.Contains(c.Reason, "summary left") || c.AfterTokens > window/2 {
			t.Fatalf("compaction %+v", c)
		}
	}
	for _, r := range p.Requests() {
		if agenttest.IsSummary(r) {
			continue
		}
		if r.Messages[1].Content != testTask {
			t.Fatalf("a request lost the task: %.100q", r.Messages[1].Content)
		}
	}
	last := p.Requests()[len(p.Requests())-1]
	if !strings.Contains(last.Messages[2].Content, "host's record") || !strings.Contains(last.Messages[2].Content, "called page") {
		t.Fatalf("fallback digest: %.300q", last.Messages[2].Content)
	}
}

// A failing summary call falls back too; a summary cut at the output limit
// is asked for once more with a larger limit.
func TestSummaryFailureAndRetry(t *testing.T) {
	const window = 6000
	var limits []int
	var mu sync.Mutex
	m := &pagingModel{steps: 80}
	m.summary = func(r agenttest.Request) agenttest.Turn {
		mu.Lock()
		defer mu.Unlock()
		limits = append(limits, r.MaxTokens)
		switch len(limits) {
		case 1:
			return agenttest.Fail(400, "bad summary", 0)
		case 2:
			return agenttest.Turn{Text: "## Done so far\ncut", FinishReason: "length"}
		}
		return agenttest.Turn{Text: testDigest}
	}
	p := scripted(m, window, 200)
	var ev events
	a := newPagingAgent(t, p, window, 600, ev.observe, nil)
	if res := a.Run(context.Background(), testTask); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("run: %+v", res)
	}
	comps := ev.compactions()
	if len(comps) < 2 || comps[0].Mode != agent.CompactFallback || !strings.Contains(comps[0].Reason, "summary call failed") ||
		comps[1].Mode != agent.CompactSummary {
		t.Fatalf("compactions %+v", comps)
	}
	if len(limits) < 3 || limits[2] != 2*limits[1] {
		t.Fatalf("summary output limits %v: the cut summary was not retried with a larger limit", limits)
	}
}

// When even the task and system prompt leave no room, the compaction says
// it failed, the run goes on as it was, and no summary is paid for again.
func TestCompactionThatCannotFit(t *testing.T) {
	const window = 400
	m := &pagingModel{steps: 3}
	p := scripted(m, 1_000_000, 10) // the model itself does not enforce this window
	var ev events
	tools := agent.NewToolRegistry()
	tools.Add(pageTool{size: 600})
	a, err := agent.New(agent.Config{Provider: p, Tools: tools, SystemPrompt: strings.Repeat("rules ", 200),
		ContextWindow: window, Observer: ev.observe})
	if err != nil {
		t.Fatal(err)
	}
	if res := a.Run(context.Background(), testTask); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("run: %+v", res)
	}
	comps := ev.compactions()
	if len(comps) != 1 || comps[0].Mode != agent.CompactFailed || comps[0].AfterTokens != comps[0].BeforeTokens {
		t.Fatalf("compactions %+v", comps)
	}
	if m.summaries.Load() > 1 {
		t.Fatalf("%d summary calls after a failure", m.summaries.Load())
	}
}

// A giant tool result reaches the model bounded to MaxToolResult, the
// same way every time, and the transcript keeps it whole.
func TestGiantToolResultBounded(t *testing.T) {
	big := "BEGIN" + strings.Repeat("x", 5<<20) + "END"
	tools := agent.NewToolRegistry()
	tools.Add(dumpTool{text: big})
	srv := agenttest.NewServer(t,
		agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "dump", Arguments: `{}`}}},
		agenttest.Turn{Text: "seen"})
	p, err := agent.Providers.New(srv.ProviderConfig())
	if err != nil {
		t.Fatal(err)
	}
	var rec bytes.Buffer
	tr := agent.NewTranscript(&rec)
	a, err := agent.New(agent.Config{Provider: p, Tools: tools, ContextWindow: 200_000, Observer: tr.Observe})
	if err != nil {
		t.Fatal(err)
	}
	if res := a.Run(context.Background(), "dump it"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("run: %+v", res)
	}
	second := srv.Requests()[1]
	if len(second.Body) > 64<<10 || bytes.Contains(second.Body, []byte("raw_content")) {
		t.Fatalf("request body is %d bytes", len(second.Body))
	}
	seen := second.Messages[len(second.Messages)-1].Content
	if len(seen) > agent.MaxToolResult || !strings.HasPrefix(seen, "BEGIN") || !strings.HasSuffix(seen, "END") {
		t.Fatalf("the model saw %d bytes: %.80q…", len(seen), seen)
	}
	if seen != agent.BoundResult(big, agent.MaxToolResult) {
		t.Fatal("the visible form is not the stable bound")
	}
	stored, err := agent.ReadTranscript(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored[2]; got.Role != agent.RoleTool || got.RawContent != big || got.Content != seen {
		t.Fatalf("transcript kept %d raw bytes, %d visible", len(got.RawContent), len(got.Content))
	}
}

func TestCompactRatioChecked(t *testing.T) {
	for _, r := range []float64{-0.1, 1, 1.5} {
		if _, err := agent.New(agent.Config{Provider: &script{}, ContextWindow: 1000, CompactRatio: r}); err == nil {
			t.Errorf("ratio %g accepted", r)
		}
	}
	if _, err := agent.New(agent.Config{Provider: &script{}, ContextWindow: -1}); err == nil {
		t.Error("negative window accepted")
	}
}

// The requester's turns in the folded stretch survive verbatim within their
// budget; one too large for it is counted as dropped, never silently lost.
func TestRequesterTurnsSurviveAFold(t *testing.T) {
	const window = 6000
	history := []agent.Message{{Role: agent.RoleUser, Content: testTask}}
	page := pageTool{size: 600}
	for i := range 30 {
		c := pageCall(i)
		out, _ := page.Execute(context.Background(), json.RawMessage(c.Arguments))
		history = append(history, agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{c}},
			agent.Message{Role: agent.RoleTool, ToolCallID: c.ID, Name: "page", Content: out})
		switch i {
		case 2:
			history = append(history, agent.Message{Role: agent.RoleUser, Content: "CONSTRAINT-42: do not change the public API"})
		case 4:
			history = append(history, agent.Message{Role: agent.RoleUser, Content: "LONG-NOTE " + strings.Repeat("detail ", 600)})
		}
	}
	m := &pagingModel{steps: 0}
	p := scripted(m, window, 4)
	var ev events
	a := newPagingAgent(t, p, window, 600, ev.observe, history)
	if res := a.Run(context.Background(), "go on"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("run: %+v", res)
	}
	comps := ev.compactions()
	if len(comps) != 1 || comps[0].KeptTurns != 1 || comps[0].DroppedTurns != 1 {
		t.Fatalf("compactions %+v", comps)
	}
	reqs := p.Requests()
	digest := reqs[len(reqs)-1].Messages[2].Content
	if !strings.Contains(digest, "<requester-message>\nCONSTRAINT-42: do not change the public API\n</requester-message>") ||
		strings.Contains(digest, "LONG-NOTE") {
		t.Fatalf("digest message: %.600q", digest)
	}
}
