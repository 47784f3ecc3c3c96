package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Context management (seed §3.6). The conversation in Agent.messages is the
// canonical, append-only record. What the model sees of it is the same
// messages, byte for byte, until the estimated prompt reaches the only
// automatic trigger, ContextWindow × CompactRatio: below it nothing is
// rewritten, so a provider's prompt cache keeps hitting. At the trigger one
// summary transaction replaces the older part by a structured digest: the
// request becomes the system prompt, the task (the first user message), one
// digest message and a verbatim recent tail. The transaction is recorded
// as a RoleCheckpoint message appended to the conversation, so a transcript
// restores it without summarizing again, and announced by an
// EventContextCompacted.

// DefaultCompactRatio is the trigger ratio when Config.CompactRatio is zero.
const DefaultCompactRatio = 0.90

// Checkpoint is what a RoleCheckpoint message records besides its digest
// (the message's Content): enough to rebuild the request that follows it.
type Checkpoint struct {
	// Task is the conversation's first user message (bounded when it was
	// too large to repeat), pinned ahead of the digest.
	Task string `json:"task,omitempty"`
	// Kept are the requester's later turns kept verbatim, oldest first.
	Kept []string `json:"kept,omitempty"`
	// Tail is how many conversation messages right before the checkpoint
	// (checkpoints not counted) stay verbatim after the digest.
	Tail int `json:"tail"`
	// Spans, when set, replace Tail: the conversation's messages (counted
	// without checkpoints, from 0) kept verbatim, as [from, to) ranges in
	// order. The first DigestAt of them come before the digest, the rest
	// after it. A fold of a named range (compress) keeps messages on both
	// sides of what it folded.
	Spans    [][2]int `json:"spans,omitempty"`
	DigestAt int      `json:"digest_at,omitempty"`
	// Failures are the failure-carrying lines of failed tool results the
	// digest replaced, kept verbatim (the keep policy, see keep.go).
	Failures []string `json:"failures,omitempty"`
}

// Compaction is the payload of EventContextCompacted.
type Compaction struct {
	Mode         string `json:"mode"`             // CompactSummary, CompactFallback or CompactFailed
	Reason       string `json:"reason,omitempty"` // why the model's summary was not used, or why nothing was
	BeforeTokens int    `json:"before_tokens"`    // estimated prompt before
	AfterTokens  int    `json:"after_tokens"`     // estimated prompt after; = BeforeTokens when failed
	Window       int    `json:"window"`
	Trigger      int    `json:"trigger"`
	Folded       int    `json:"folded_messages"` // messages the digest replaced this time
	KeptTurns    int    `json:"user_turns_kept"`
	DroppedTurns int    `json:"user_turns_dropped"` // requester turns that only the digest carries now
	// Source is what asked for the fold: "" (the automatic trigger),
	// FoldCommand (/compact) or FoldTool (compress).
	Source string `json:"source,omitempty"`
	// Warning is set when the fold had to drop requester turns into the
	// digest: the count alone does not tell a reader what to do.
	Warning string `json:"warning,omitempty"`
}

// The modes of a Compaction.
const (
	CompactSummary  = "summary"  // the model's digest was accepted
	CompactFallback = "fallback" // a deterministic digest and a shorter tail were used instead
	CompactFailed   = "failed"   // nothing fitted; the conversation was left as it was
)

func checkCompaction(cfg *Config) error {
	if cfg.ContextWindow < 0 {
		return fmt.Errorf("agent: context window must not be negative, got %d", cfg.ContextWindow)
	}
	if cfg.CompactRatio == 0 {
		cfg.CompactRatio = DefaultCompactRatio
	}
	if r := cfg.CompactRatio; math.IsNaN(r) || r <= 0 || r >= 1 {
		return fmt.Errorf("agent: compact ratio must be strictly between 0 and 1, got %g", r)
	}
	return nil
}

// contextState is what the model sees of the conversation: prefix in place
// of messages[:mark+1], then the messages after mark as they are.
type contextState struct {
	mark   int       // index of the checkpoint in force; -1 before the first
	prefix []Message // task, digest and tail of that checkpoint
	// body are the verbatim messages of prefix (neither the task nor the
	// digest), and bodyIdx their indexes in the conversation without
	// checkpoints; before any checkpoint, everything before mark.
	body    []Message
	bodyIdx []int
	convLen int // conversation messages (checkpoints not counted) before mark
	cp      *Checkpoint
	digest  string

	sentAt         int  // len(messages) when the last request was built
	sentTokens     int  // that request's prompt + completion, as reported; 0 = unknown
	sentCompletion bool // the reply's tokens are in sentTokens
	fixed          int  // estimated tokens of the system prompt and tools; -1 = not yet
	failed         bool // a compaction found nothing that fits; do not pay again
}

// restore finds the last checkpoint of a restored conversation. One this
// version cannot read shows the model everything before it instead.
func (w *contextState) restore(msgs []Message) {
	*w = contextState{mark: -1, fixed: -1}
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleCheckpoint {
			last = i
			break
		}
	}
	if last < 0 {
		return
	}
	conv := conversation(msgs[:last])
	w.mark, w.convLen = last, len(conv)
	cp := msgs[last].Checkpoint
	idx, ok := verbatimIndexes(cp, conv)
	if !ok {
		w.prefix, w.body, w.bodyIdx = conv, conv, seq(0, len(conv))
		return
	}
	w.cp, w.digest = cp, msgs[last].Content
	w.body, w.bodyIdx = pick(conv, idx), idx
	w.prefix = checkpointPrefix(cp, w.digest, w.body)
}

// verbatimIndexes lists the conversation indexes a checkpoint keeps
// verbatim, or reports that conv does not fit it: a range out of order or
// out of bounds, or a verbatim run that opens with tool results whose
// call was folded.
func verbatimIndexes(cp *Checkpoint, conv []Message) ([]int, bool) {
	if cp == nil {
		return nil, false
	}
	if cp.Spans == nil {
		if cp.Tail < 0 || cp.Tail > len(conv) || cp.DigestAt != 0 || cp.Tail > 0 && conv[len(conv)-cp.Tail].Role == RoleTool {
			return nil, false
		}
		return seq(len(conv)-cp.Tail, len(conv)), true
	}
	var idx []int
	prev := 0
	for _, s := range cp.Spans {
		if s[0] < prev || s[1] <= s[0] || s[1] > len(conv) {
			return nil, false
		}
		if conv[s[0]].Role == RoleTool && (len(idx) == 0 || idx[len(idx)-1] != s[0]-1) {
			return nil, false
		}
		idx = append(idx, seq(s[0], s[1])...)
		prev = s[1]
	}
	if cp.DigestAt < 0 || cp.DigestAt > len(idx) || cp.DigestAt < len(idx) && conv[idx[cp.DigestAt]].Role == RoleTool {
		return nil, false
	}
	return idx, true
}

// seq is [from, to).
func seq(from, to int) []int {
	out := make([]int, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// pick is conv at idx.
func pick(conv []Message, idx []int) []Message {
	out := make([]Message, len(idx))
	for i, j := range idx {
		out[i] = conv[j]
	}
	return out
}

// spans turns ascending indexes into [from, to) runs.
func spans(idx []int) [][2]int {
	var out [][2]int
	for _, i := range idx {
		if n := len(out); n > 0 && out[n-1][1] == i {
			out[n-1][1]++
			continue
		}
		out = append(out, [2]int{i, i + 1})
	}
	return out
}

// conversation is msgs without checkpoints.
func conversation(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != RoleCheckpoint {
			out = append(out, m)
		}
	}
	return out
}

// checkpointPrefix is what the model sees in place of everything up to a
// checkpoint: the task, the verbatim messages before the digest, the digest
// and the verbatim messages after it. It depends only on what the
// checkpoint records, so a restored conversation sends the same bytes as
// the one that compacted.
func checkpointPrefix(cp *Checkpoint, digest string, body []Message) []Message {
	out := make([]Message, 0, 2+len(body))
	if cp.Task != "" {
		out = append(out, Message{Role: RoleUser, Content: cp.Task})
	}
	at := min(max(cp.DigestAt, 0), len(body))
	out = append(out, body[:at]...)
	out = append(out, Message{Role: RoleUser, Content: digestMessage(cp.Kept, cp.Failures, digest)})
	return append(out, body[at:]...)
}

// prompt returns the messages of the next request, compacting first when
// the estimate has reached the trigger. spent is the summary call's usage.
// The error is only ever the end of ctx.
func (a *Agent) prompt(ctx context.Context, step int) (_ []Message, spent Usage, _ error) {
	if a.compactAsked {
		a.compactAsked = false
		var err error
		if _, spent, err = a.compactNow(ctx, step, FoldCommand, a.compactFocus); err != nil {
			return nil, spent, err
		}
	}
	if a.cfg.ContextWindow > 0 && !a.window.failed && a.estimate() >= a.trigger() {
		var err error
		var more Usage
		more, err = a.compact(ctx, step)
		if spent = spent.Add(more); err != nil {
			return nil, spent, err
		}
	}
	a.window.sentAt = len(a.messages)
	msgs := a.modelMessages()
	a.dropImages() // msgs keeps its copies: this request is their one trip
	return msgs, spent, nil
}

// modelMessages is the request's view of the conversation, with the system
// prompt first and full tool results (RawContent) left out.
func (a *Agent) modelMessages() []Message {
	w := &a.window
	rest := a.messages[w.mark+1:]
	out := make([]Message, 0, 1+len(w.prefix)+len(rest))
	if a.cfg.SystemPrompt != "" {
		out = append(out, Message{Role: RoleSystem, Content: a.cfg.SystemPrompt})
	}
	out = append(out, w.prefix...)
	out = append(out, rest...)
	for i := range out {
		if out[i].RawContent != "" {
			out[i].RawContent = ""
		}
	}
	return out
}

func (a *Agent) trigger() int {
	return int(math.Floor(float64(a.cfg.ContextWindow) * a.cfg.CompactRatio))
}

// reported records what the provider said the last request cost: its
// prompt plus the reply is the best estimate of the next prompt's start.
func (w *contextState) reported(total, spent Usage) {
	prompt, completion := total.Prompt-spent.Prompt, total.Completion-spent.Completion
	if prompt <= 0 {
		w.sentTokens = 0
		return
	}
	w.sentTokens, w.sentCompletion = prompt+completion, completion > 0
}

// estimate is the next request's prompt in tokens: the provider's count of
// the last request plus a cheap estimate of what was added since, or a
// cheap estimate of everything when the provider did not say.
func (a *Agent) estimate() int {
	w := &a.window
	if w.sentTokens > 0 && w.sentAt > w.mark && w.sentAt <= len(a.messages) {
		from := w.sentAt
		if w.sentCompletion && from < len(a.messages) {
			from++ // the reply, counted as completion tokens
		}
		return w.sentTokens + estimateMessages(a.messages[from:])
	}
	return a.fixedTokens() + estimateMessages(w.prefix) + estimateMessages(a.messages[w.mark+1:])
}

// fixedTokens estimates the part of every request that is not the
// conversation: the system prompt and the tool schemas.
func (a *Agent) fixedTokens() int {
	if a.window.fixed < 0 {
		n := estimateText(a.cfg.SystemPrompt) + messageOverhead
		for _, s := range a.cfg.Tools.Schemas() {
			n += estimateText(s.Name) + estimateText(s.Description) + (len(s.Parameters)+2)/3 + messageOverhead
		}
		a.window.fixed = n
	}
	return a.window.fixed
}

// errNothingFits ends a compaction that could not land under the trigger.
var errNothingFits = errors.New("no digest and tail fit under half the window")
