package agenttest

import (
	"strings"
	"unicode/utf8"

	"reasonix/agent"
)

// streamPlan is the sequence of chunks one turn becomes on the wire.
type streamPlan struct {
	chunks []chunk
	// complete is false for a cut, stalled or garbled turn: after the chunks the
	// connection is dropped or left hanging, without a finish reason, usage
	// or [DONE].
	complete bool
}

// planStream splits a turn the way real servers do, and a little more
// aggressively: text arrives in several deltas, and the id, name and
// arguments of every tool call are each split across chunks, with parallel
// calls interleaved, so a client must accumulate by index.
func planStream(t Turn, model string, includeUsage bool) streamPlan {
	mk := func(d delta, finish *string) chunk {
		return chunk{ID: "chatcmpl-fake", Object: "chat.completion.chunk", Model: model,
			Choices: []chunkChoice{{Delta: d, FinishReason: finish}}}
	}
	empty := ""
	p := streamPlan{chunks: []chunk{mk(delta{Role: "assistant", Content: &empty}, nil)}}
	for _, piece := range splitN(t.Thinking, 2) {
		p.chunks = append(p.chunks, mk(delta{Reasoning: &piece}, nil))
	}
	for _, piece := range splitN(t.Text, 3) {
		p.chunks = append(p.chunks, mk(delta{Content: &piece}, nil))
	}

	frags := make([][]wireToolCall, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		frags[i] = callFragments(i, c)
	}
	if t.Cut && len(frags) > 0 {
		last := len(frags) - 1
		frags[last] = frags[last][:max(1, len(frags[last])/2)]
	}
	for round := 0; ; round++ {
		sent := false
		for _, f := range frags {
			if round < len(f) {
				p.chunks = append(p.chunks, mk(delta{ToolCalls: []wireToolCall{f[round]}}, nil))
				sent = true
			}
		}
		if !sent {
			break
		}
	}
	if t.Cut || t.Stall || t.Garble {
		return p
	}

	reason := t.finishReason()
	p.chunks = append(p.chunks, mk(delta{}, &reason))
	if includeUsage {
		u := &chunkUsage{PromptTokens: t.Usage.Prompt, CompletionTokens: t.Usage.Completion,
			TotalTokens: t.Usage.Prompt + t.Usage.Completion}
		u.Details.CachedTokens = t.Usage.Cached
		p.chunks = append(p.chunks, chunk{ID: "chatcmpl-fake", Object: "chat.completion.chunk",
			Model: model, Choices: []chunkChoice{}, Usage: u})
	}
	p.complete = true
	return p
}

// callFragments splits one tool call into its wire deltas.
func callFragments(index int, c agent.ToolCall) []wireToolCall {
	idA, idB := splitHalf(c.ID)
	nameA, nameB := splitHalf(c.Name)
	frag := func() wireToolCall { i := index; return wireToolCall{Index: &i} }

	first := frag()
	first.ID, first.Type = idA, "function"
	first.Function.Name = nameA
	out := []wireToolCall{first}
	if idB != "" || nameB != "" {
		second := frag()
		second.ID = idB
		second.Function.Name = nameB
		out = append(out, second)
	}
	for _, piece := range splitN(c.Arguments, 3) {
		f := frag()
		f.Function.Arguments = piece
		out = append(out, f)
	}
	return out
}

// splitHalf splits s in two at a rune boundary. It does not split when the
// second half would repeat the first, because a client cannot tell such a
// split from a server that resends the whole value.
func splitHalf(s string) (string, string) {
	if utf8.RuneCountInString(s) < 2 {
		return s, ""
	}
	parts := splitN(s, 2)
	if strings.HasPrefix(parts[1], parts[0]) {
		return s, ""
	}
	return parts[0], parts[1]
}

// splitN splits s into at most n non-empty pieces of about equal rune count.
func splitN(s string, n int) []string {
	runes := utf8.RuneCountInString(s)
	if runes == 0 {
		return nil
	}
	size := (runes + n - 1) / n
	var out []string
	for s != "" {
		cut, count := 0, 0
		for cut < len(s) && count < size {
			_, w := utf8.DecodeRuneInString(s[cut:])
			cut += w
			count++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}
