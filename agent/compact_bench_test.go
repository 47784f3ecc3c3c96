package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

type nopProvider struct{}

func (nopProvider) Name() string { return "nop" }
func (nopProvider) Stream(context.Context, Request) (<-chan Chunk, error) {
	return nil, fmt.Errorf("not for benchmarks")
}

// benchConversation is a task and 999 messages: assistant calls with their
// results of about 1.5 KB each, the shape of a long tool loop.
func benchConversation() []Message {
	msgs := []Message{{Role: RoleUser, Content: "fix the failing tests in ./pkg and keep the public API"}}
	for i := 0; len(msgs) < 1000; i++ {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			Message{Role: RoleAssistant, Content: "Looking at the next file.", ToolCalls: []ToolCall{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg/file_%d.go"}`, i)}}},
			Message{Role: RoleTool, ToolCallID: id, Name: "read_file", Content: strings.Repeat(fmt.Sprintf("line %d of a Go source file\n", i), 55)})
	}
	return msgs[:1000]
}

// BenchmarkCompactionHostSide is the host's share of one compaction of a
// 1,000-message conversation: estimating the prompt, deciding, planning the
// fold, rendering the summarizer's input, measuring the candidate and the
// fallback, and building the new view. The model's summary call is not
// part of it (the digest is given).
func BenchmarkCompactionHostSide(b *testing.B) {
	msgs := benchConversation()
	window := estimateMessages(msgs) * 100 / 95 // the conversation is at 95% of it
	a, err := New(Config{Provider: nopProvider{}, SystemPrompt: DefaultSystemPrompt, ContextWindow: window, History: msgs})
	if err != nil {
		b.Fatal(err)
	}
	digest := "## Done so far\n" + strings.Repeat("Read and fixed files. ", 200)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.window.restore(a.messages)
		before := a.estimate()
		if before < a.trigger() {
			b.Fatalf("estimate %d below trigger %d", before, a.trigger())
		}
		bud := budgetsFor(window)
		p := a.plan(bud, bud.tail, true)
		input := summaryInput(&p, window-bud.summary*2)
		after := a.measure(&p, digest)
		fb := fallbackDigest(&p, bud.summary)
		if !a.fits(after, before) || len(input) == 0 || a.measure(&p, fb) >= before {
			b.Fatalf("candidate %d does not fit (before %d)", after, before)
		}
		cp := &Checkpoint{Task: p.task, Kept: p.kept, Tail: len(p.tail)}
		_ = checkpointPrefix(cp, digest, p.tail)
	}
}

// BenchmarkPromptBelowTrigger is what every request pays for context
// management when no compaction triggers: the estimate against the trigger
// and the request's view of a 1,000-message conversation (which the harness
// built before compaction existed too).
func BenchmarkPromptBelowTrigger(b *testing.B) {
	msgs := benchConversation()
	a, err := New(Config{Provider: nopProvider{}, SystemPrompt: DefaultSystemPrompt, ContextWindow: 10 * estimateMessages(msgs), History: msgs})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		out, _, err := a.prompt(context.Background(), 1)
		if err != nil || len(out) != len(msgs)+1 {
			b.Fatalf("view of %d messages, %v", len(out), err)
		}
	}
}
