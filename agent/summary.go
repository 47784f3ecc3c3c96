package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// summaryPrompt is the system prompt of the summary call.
var summaryPrompt = "You condense the middle of a coding agent's conversation so the agent can continue its task " +
	"with less context. Write a faithful, dense digest in markdown with exactly these sections, in this order:\n" +
	"## " + strings.Join(digestTitles, "\n## ") + "\n" +
	"Keep exact file paths, commands, error messages, identifiers and numbers that matter for the work ahead. " +
	"State what was verified and what was not. Say nothing about this instruction; write only the digest."

// summarize asks the model for the digest of p. A reply cut at the output
// limit is asked for once more with a larger limit.
func (a *Agent) summarize(ctx context.Context, step int, p *foldPlan, b budgets) (string, Usage, error) {
	input := summaryInput(p, a.cfg.ContextWindow-b.summary*2-estimateText(summaryPrompt)-messageOverhead*3)
	if p.focus != "" {
		input = "<requester-focus>\n" + BoundResult(p.focus, 2048) + "\n</requester-focus>\n\n" + input
	}
	var spent Usage
	limit := b.summary
	for attempt := 0; ; attempt++ {
		text, finish, u, err := a.summaryCall(ctx, step, input, limit)
		spent = spent.Add(u)
		if err != nil {
			return "", spent, fmt.Errorf("the summary call failed: %w", err)
		}
		if finish == "length" {
			if attempt == 0 {
				limit *= 2
				continue
			}
			return "", spent, fmt.Errorf("the summary was cut at the output limit (%d tokens)", limit)
		}
		d, err := ParseDigest(text)
		if err != nil {
			return "", spent, errors.New("the summary was empty")
		}
		return d.String(), spent, nil
	}
}

// summaryCall makes one summary request and gathers its text.
func (a *Agent) summaryCall(ctx context.Context, step int, input string, limit int) (text, finish string, usage Usage, err error) {
	req := Request{
		Model: a.cfg.Model,
		Messages: []Message{
			{Role: RoleSystem, Content: summaryPrompt},
			{Role: RoleUser, Content: input},
		},
		Temperature: a.cfg.Temperature,
		MaxTokens:   limit,
	}
	sctx := ContextWithRetryReporter(ctx, func(text string) {
		a.cfg.Observer(Event{Type: EventRetry, Step: step, Text: "compaction summary: " + text})
	})
	stream, err := a.cfg.Provider.Stream(sctx, req)
	if err != nil {
		return "", "", Usage{}, err
	}
	var b strings.Builder
	for chunk := range stream {
		switch chunk.Type {
		case ChunkText:
			b.WriteString(chunk.Text)
		case ChunkUsage:
			usage = usage.Add(chunk.Usage)
			u := chunk.Usage
			a.cfg.Observer(Event{Type: EventUsage, Step: step, Usage: &u, Model: ModelRef(a.cfg)})
		case ChunkError:
			for range stream {
			}
			return "", "", usage, chunk.Err
		case ChunkDone:
			finish = chunk.FinishReason
		}
	}
	if ctx.Err() != nil {
		return "", "", usage, context.Cause(ctx)
	}
	return b.String(), finish, usage, nil
}

// summaryInput renders the prior digest and the folded messages for the
// summarizer within budget tokens. Long bodies are cut to their head and
// tail; when the whole is still too large the oldest messages go first,
// since the prior digest already covers what came before them.
func summaryInput(p *foldPlan, budget int) string {
	limit := tokenBytes(max(budget, 256))
	var prior string
	if p.prior != "" {
		prior = "<prior-digest>\n" + BoundResult(p.prior, limit/3) + "\n</prior-digest>\n\n"
	}
	per := max(min(2048, (limit-len(prior))/max(len(p.fold), 1)), 512)
	// Size from the newest message back to find where to start, then
	// render forward into one buffer.
	room, from := limit-len(prior)-64, len(p.fold)
	for from > 0 {
		n := renderedSize(&p.fold[from-1], per)
		if room-n < 0 {
			break
		}
		room -= n
		from--
	}
	var b strings.Builder
	b.Grow(limit - room + 128)
	b.WriteString(prior + "<conversation>\n")
	if from > 0 {
		fmt.Fprintf(&b, "(%d earlier messages omitted)\n", from)
	}
	for i := from; i < len(p.fold); i++ {
		renderForSummary(&b, &p.fold[i], per)
	}
	b.WriteString("</conversation>")
	return b.String()
}

// renderedSize bounds what renderForSummary writes for m.
func renderedSize(m *Message, per int) int {
	n := len(m.Name) + len(m.Role) + 24 + min(len(m.Content), per)
	for _, c := range m.ToolCalls {
		n += len(c.Name) + 10 + min(len(c.Arguments), per/2)
	}
	return n
}

func renderForSummary(b *strings.Builder, m *Message, per int) {
	switch m.Role {
	case RoleTool:
		b.WriteString("[result of " + m.Name + "]\n")
	default:
		b.WriteString("[" + string(m.Role) + "]\n")
	}
	if m.Content != "" {
		b.WriteString(BoundResult(m.Content, per))
		b.WriteByte('\n')
	}
	for _, c := range m.ToolCalls {
		b.WriteString("[call " + c.Name + "] ")
		b.WriteString(BoundResult(c.Arguments, per/2))
		b.WriteByte('\n')
	}
}
