package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

func checkpoints(msgs []agent.Message) []agent.Message {
	var out []agent.Message
	for _, m := range msgs {
		if m.Role == agent.RoleCheckpoint {
			out = append(out, m)
		}
	}
	return out
}

// /compact, as a run's input, folds the conversation into exactly one
// checkpoint, never reaches the model as a turn, and the next request
// carries the digest instead of what it folded.
func TestCompactCommandMakesOneCheckpoint(t *testing.T) {
	const window = 200_000 // far below the trigger: only the command compacts
	m := &pagingModel{steps: 6}
	p := scripted(m, window, 20)
	ev := &events{}
	a := newPagingAgent(t, p, window, 2000, ev.observe, nil)
	if res := a.Run(t.Context(), testTask); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("first run: %v %v", res.Outcome, res.Err)
	}
	if n := len(checkpoints(a.Messages())); n != 0 {
		t.Fatalf("%d checkpoints before /compact", n)
	}
	before := len(p.Requests())
	res := a.Run(t.Context(), "/compact")
	if res.Outcome != agent.OutcomeSucceeded || !strings.Contains(res.FinalAnswer, "context compacted") {
		t.Fatalf("/compact: %v %q %v", res.Outcome, res.FinalAnswer, res.Err)
	}
	cps := checkpoints(a.Messages())
	if len(cps) != 1 {
		t.Fatalf("/compact made %d checkpoints, want exactly 1", len(cps))
	}
	reqs := p.Requests()[before:]
	if len(reqs) != 1 || !agenttest.IsSummary(reqs[0]) {
		t.Fatalf("/compact made %d requests, want one summary call", len(reqs))
	}
	for _, msg := range a.Messages() {
		if strings.Contains(msg.Content, "/compact") {
			t.Fatalf("the command reached the conversation: %+v", msg)
		}
	}
	cs := ev.compactions()
	if len(cs) != 1 || cs[0].Source != agent.FoldCommand || cs[0].Mode != agent.CompactSummary || cs[0].Folded == 0 || cs[0].AfterTokens >= cs[0].BeforeTokens {
		t.Fatalf("compactions %+v", cs)
	}

	// The next turn sees the task, the digest and the last exchange only.
	m.calls.Store(100) // answer at once
	if res := a.Run(t.Context(), "and now?"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("next run: %v", res.Err)
	}
	last := p.Requests()[len(p.Requests())-1]
	var digest, folded bool
	for _, msg := range last.Messages {
		digest = digest || strings.Contains(msg.Content, "Read some pages.")
		folded = folded || strings.Contains(msg.Content, "page 1 begins.")
	}
	if !digest || folded {
		t.Fatalf("request after /compact: digest %v, folded page present %v", digest, folded)
	}

	// A second /compact right away has nothing left to fold and says so.
	if res := a.Run(t.Context(), "/compact"); !strings.Contains(res.FinalAnswer, "not compacted") {
		t.Fatalf("second /compact: %q", res.FinalAnswer)
	}
}

// /compact steered into a running loop folds before the next request.
func TestSteeredCompactFoldsBeforeNextRequest(t *testing.T) {
	const window = 200_000
	m := &pagingModel{steps: 5}
	var a *agent.Agent
	p := agenttest.NewScriptedProvider()
	for range 20 {
		p.Add(agenttest.Respond(func(r agenttest.Request) agenttest.Turn {
			if !agenttest.IsSummary(r) && m.calls.Load() == 3 {
				a.Steer("/compact keep page numbers")
			}
			return agenttest.Windowed(window, m.turn)(r)
		}))
	}
	a = newPagingAgent(t, p, window, 2000, nil, nil)
	if res := a.Run(t.Context(), testTask); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("run: %v %v", res.Outcome, res.Err)
	}
	if n := len(checkpoints(a.Messages())); n != 1 {
		t.Fatalf("%d checkpoints, want 1", n)
	}
	var sawFocus bool
	for _, r := range p.Requests() {
		if agenttest.IsSummary(r) {
			sawFocus = strings.Contains(r.Messages[len(r.Messages)-1].Content, "keep page numbers")
		}
	}
	if !sawFocus {
		t.Fatal("the summary call did not carry the requester's focus")
	}
}

// foldTool calls the conversation's Fold, like the compress built-in.
type foldTool struct{}

func (foldTool) Name() string            { return "fold" }
func (foldTool) Description() string     { return "folds a range" }
func (foldTool) Schema() json.RawMessage { return nil }
func (foldTool) ReadOnly() bool          { return true }
func (foldTool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	var r agent.FoldRequest
	if err := json.Unmarshal(args, &r); err != nil {
		return "", err
	}
	c, ok := agent.ConversationFrom(ctx)
	if !ok {
		return "", nil
	}
	got, err := c.Fold(ctx, r)
	if err != nil {
		return "", err
	}
	return got.Mode, nil
}

// A named range folds while the messages before it and the exchange in
// progress stay verbatim, and a restored conversation sends the same view.
func TestFoldNamedRangeKeepsBothSides(t *testing.T) {
	const window = 200_000
	long := strings.Repeat("filler ", 600)
	turn := 0
	p := agenttest.NewScriptedProvider()
	script := []agenttest.Turn{
		{ToolCalls: []agent.ToolCall{{ID: "a", Name: "dump", Arguments: `{}`}}},
		{Text: "first done"},
		{ToolCalls: []agent.ToolCall{{ID: "b", Name: "dump", Arguments: `{}`}}},
		{Text: "second done"},
		{ToolCalls: []agent.ToolCall{{ID: "c", Name: "dump", Arguments: `{}`}}},
		{Text: "third done"},
		{ToolCalls: []agent.ToolCall{{ID: "f", Name: "fold", Arguments: `{"From":"SECOND-ASK","To":"THIRD-ASK"}`}}},
		{Text: "folded"},
		{Text: "after"},
	}
	for range 20 {
		p.Add(agenttest.Respond(agenttest.Windowed(window, func(r agenttest.Request) agenttest.Turn {
			if agenttest.IsSummary(r) {
				return agenttest.Turn{Text: "## Done so far\nDIGEST-OF-RANGE"}
			}
			turn++
			return script[turn-1]
		})))
	}
	tools := agent.NewToolRegistry()
	for _, tl := range []agent.Tool{dumpTool{text: long}, foldTool{}} {
		if err := tools.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	cfg := agent.Config{Provider: p, Tools: tools, SystemPrompt: testSystem, ContextWindow: window}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"FIRST-ASK " + testTask, "SECOND-ASK look again", "THIRD-ASK once more", "FOURTH-ASK fold the middle"} {
		if res := a.Run(t.Context(), in); res.Outcome != agent.OutcomeSucceeded {
			t.Fatalf("%s: %v %v", in, res.Outcome, res.Err)
		}
	}
	msgs := a.Messages()
	cps := checkpoints(msgs)
	if len(cps) != 1 || cps[0].Checkpoint.DigestAt == 0 || len(cps[0].Checkpoint.Spans) == 0 {
		t.Fatalf("checkpoints %+v", cps)
	}
	view := func(r agenttest.Request) string {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(string(m.Role) + ":" + m.Content + "|")
		}
		return b.String()
	}
	last := view(p.Requests()[len(p.Requests())-1])
	for _, want := range []string{"FIRST-ASK", "first done", "DIGEST-OF-RANGE", "FOURTH-ASK", "tool:summary|"} {
		if !strings.Contains(last, want) {
			t.Errorf("the request after the fold lacks %q", want)
		}
	}
	if strings.Contains(last, "second done") || strings.Contains(last, "third done") {
		t.Error("the folded range is still verbatim")
	}
	// The first exchange is before the digest, the fourth after it.
	if i, j, k := strings.Index(last, "first done"), strings.Index(last, "DIGEST-OF-RANGE"), strings.Index(last, "FOURTH-ASK"); !(i < j && j < k) {
		t.Errorf("order: first %d, digest %d, fourth %d", i, j, k)
	}

	// Restored from the transcript, the same conversation sends the same view.
	cfg.History = msgs
	b, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res := b.Run(t.Context(), "FIFTH-ASK"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatal(res.Err)
	}
	again := view(p.Requests()[len(p.Requests())-1])
	if !strings.HasPrefix(again, last) {
		t.Errorf("a restored conversation sends another view:\n%s\nwas\n%s", again, last)
	}
}

// An anchor must name exactly one requester message.
func TestFoldAnchorMustBeUnique(t *testing.T) {
	const window = 200_000
	p := agenttest.NewScriptedProvider(
		agenttest.Turn{Text: "ok"},
		agenttest.Turn{ToolCalls: []agent.ToolCall{
			{ID: "x", Name: "fold", Arguments: `{"From":"same words"}`},
			{ID: "y", Name: "fold", Arguments: `{"From":"nowhere at all"}`}}},
		agenttest.Turn{Text: "done"},
	)
	tools := agent.NewToolRegistry()
	if err := tools.Add(foldTool{}); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Provider: p, Tools: tools, ContextWindow: window})
	if err != nil {
		t.Fatal(err)
	}
	a.Run(t.Context(), "same words first")
	a.Run(t.Context(), "same words again")
	var results []string
	for _, m := range a.Messages() {
		if m.Role == agent.RoleTool {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "occurs 2 times") || !strings.Contains(results[1], "in none of") {
		t.Fatalf("results %q", results)
	}
	if n := len(checkpoints(a.Messages())); n != 0 {
		t.Fatalf("%d checkpoints after refused folds", n)
	}
}
