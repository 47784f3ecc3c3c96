package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Folding on demand (seed §3.6): besides the automatic trigger, the
// requester can ask for a compaction with the built-in action /compact (a
// run's input or a steering message; it never reaches the model), and the
// model can fold a named range with the compress tool when the requester
// asks for it. Both commit the same checkpoint an automatic compaction
// does, so a restored conversation rebuilds the same view.

// The sources of a Compaction that was asked for.
const (
	FoldCommand = "command" // the /compact action
	FoldTool    = "tool"    // the compress tool
)

// CompactCommand is the built-in action that compacts the conversation now.
// Words after it say what the digest should focus on.
const CompactCommand = "/compact"

// ParseCompactCommand reports whether text is the /compact action, and the
// focus words after it.
func ParseCompactCommand(text string) (focus string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), CompactCommand)
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\n' && rest[0] != '\t' {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// Conversation is what a tool may ask of the conversation it runs in. The
// harness hands each call its own through the context (ConversationFrom).
type Conversation interface {
	// Fold replaces the requester-named range by a digest (compress).
	Fold(ctx context.Context, r FoldRequest) (Compaction, error)
	// ToolResult is the full text of the result of call id, as the tool
	// produced it (before MaxToolResult bounded it); the latest one when
	// several calls had that id.
	ToolResult(id string) (string, error)
}

// FoldRequest names a range of the conversation by exact text of the
// requester's messages: From is a fragment of the message the range starts
// at, To (optional) of the message whose exchange ends it; without To the
// range runs up to the exchange in progress. Focus tells the summarizer
// what matters.
type FoldRequest struct {
	From, To, Focus string
}

type conversationKey struct{}

// ContextWithConversation returns ctx carrying c for the tools it reaches.
func ContextWithConversation(ctx context.Context, c Conversation) context.Context {
	return context.WithValue(ctx, conversationKey{}, c)
}

// ConversationFrom returns the conversation a tool call runs in.
func ConversationFrom(ctx context.Context) (Conversation, bool) {
	c, ok := ctx.Value(conversationKey{}).(Conversation)
	return c, ok
}

// toolConversation is an Agent's Conversation for the calls of one step.
type toolConversation struct {
	a    *Agent
	step int
}

func (c toolConversation) Fold(ctx context.Context, r FoldRequest) (Compaction, error) {
	c.a.foldMu.Lock()
	defer c.a.foldMu.Unlock()
	return c.a.foldRange(ctx, c.step, r)
}

func (c toolConversation) ToolResult(id string) (string, error) {
	c.a.foldMu.Lock()
	defer c.a.foldMu.Unlock()
	for i := len(c.a.messages) - 1; i >= 0; i-- {
		if m := &c.a.messages[i]; m.Role == RoleTool && m.ToolCallID == id {
			if m.RawContent != "" {
				return m.RawContent, nil
			}
			return m.Content, nil
		}
	}
	return "", fmt.Errorf("no tool result with id %q in this conversation", id)
}

// errCompactionOff answers a fold asked for when the window is unknown.
var errCompactionOff = errors.New("compaction is off: no context window is configured for this model")

// compactNow is /compact: everything the model sees except the task and
// the last exchange folds into a digest, whatever the estimate. The error
// is only ever the end of ctx; a fold that could not be made is reported
// in the Compaction (mode failed) and may be asked for again.
func (a *Agent) compactNow(ctx context.Context, step int, source, focus string) (Compaction, Usage, error) {
	if a.cfg.ContextWindow <= 0 {
		return Compaction{Mode: CompactFailed, Reason: errCompactionOff.Error(), Source: source}, Usage{}, nil
	}
	b := budgetsFor(a.cfg.ContextWindow)
	p := a.plan(b, 0, true)
	p.focus = focus
	return a.foldPlanned(ctx, step, &p, source)
}

// foldPlanned summarizes a plan asked for by source and commits it when it
// makes the prompt smaller: the model's digest, else the host's own.
func (a *Agent) foldPlanned(ctx context.Context, step int, p *foldPlan, source string) (Compaction, Usage, error) {
	before := a.estimate()
	if len(p.fold) == 0 {
		return Compaction{Mode: CompactFailed, Reason: "nothing to fold: the conversation is only the task and the last exchange", Source: source,
			BeforeTokens: before, AfterTokens: before, Window: a.cfg.ContextWindow, Trigger: a.trigger()}, Usage{}, nil
	}
	b := budgetsFor(a.cfg.ContextWindow)
	digest, spent, err := a.summarize(ctx, step, p, b)
	if ctx.Err() != nil {
		return Compaction{}, spent, context.Cause(ctx)
	}
	mode, reason := CompactSummary, ""
	if err != nil {
		mode, reason, digest = CompactFallback, err.Error(), fallbackDigest(p, b.summary)
	}
	after := a.measure(p, digest)
	if after >= before && mode == CompactSummary {
		mode, reason = CompactFallback, fmt.Sprintf("the summary left a %d-token prompt, not less than %d", after, before)
		digest = fallbackDigest(p, b.summary)
		after = a.measure(p, digest)
	}
	c := Compaction{Mode: mode, Reason: reason, BeforeTokens: before, AfterTokens: after, Source: source}
	if after >= before {
		c.Mode, c.AfterTokens = CompactFailed, before
		c.Reason = strings.TrimPrefix(c.Reason+"; folding that range would not make the prompt smaller", "; ")
		c.Window, c.Trigger = a.cfg.ContextWindow, a.trigger()
		a.cfg.Observer(Event{Type: EventContextCompacted, Step: step, Compaction: &c})
		return c, spent, nil
	}
	a.commit(step, p, digest, c)
	c.Window, c.Trigger = a.cfg.ContextWindow, a.trigger()
	c.Folded, c.KeptTurns, c.DroppedTurns = len(p.fold), len(p.kept), p.dropped
	return c, spent, nil
}

// foldRange is compress: it folds the range r names. An error is the
// model's to read (an anchor that is missing or not unique).
func (a *Agent) foldRange(ctx context.Context, step int, r FoldRequest) (Compaction, error) {
	if a.cfg.ContextWindow <= 0 {
		return Compaction{}, errCompactionOff
	}
	b := budgetsFor(a.cfg.ContextWindow)
	src := a.foldSource(b)
	from, err := src.anchor(r.From, "from")
	if err != nil {
		return Compaction{}, err
	}
	// The exchange in progress (the call asking for the fold) stays.
	end := len(src.body)
	for i := len(src.body) - 1; i >= 0; i-- {
		if src.body[i].Role == RoleAssistant {
			end = i
			break
		}
	}
	to := end
	if r.To != "" {
		k, err := src.anchor(r.To, "to")
		if err != nil {
			return Compaction{}, err
		}
		if k < from {
			return Compaction{}, errors.New("the message named by to comes before the one named by from")
		}
		for to = k + 1; to < end && src.body[to].Role != RoleUser; to++ {
		}
	}
	if to <= from {
		return Compaction{}, errors.New("nothing to fold between those messages: the range is the exchange in progress")
	}
	p := a.planSplit(b, &src, from, to)
	p.focus = r.Focus
	c, spent, err := a.foldPlanned(ctx, step, &p, FoldTool)
	if spent != (Usage{}) {
		a.foldSpent = a.foldSpent.Add(spent)
	}
	return c, err
}

// anchor finds the requester message that holds text exactly once among
// all the requester's messages the model sees, as a body index (0 for the
// task, which stays pinned: the range then starts at the beginning).
func (s *foldSource) anchor(text, field string) (int, error) {
	if strings.TrimSpace(text) == "" {
		return 0, fmt.Errorf("%s must be an exact piece of one of the requester's messages", field)
	}
	found, at := 0, 0
	if strings.Contains(s.task, text) {
		found += strings.Count(s.task, text)
	}
	for i := range s.body {
		if s.body[i].Role == RoleUser && strings.Contains(s.body[i].Content, text) {
			found += strings.Count(s.body[i].Content, text)
			at = i
		}
	}
	switch {
	case found == 0:
		return 0, fmt.Errorf("%s %q is in none of the requester's messages the model sees; quote one exactly", field, bound(text, 80))
	case found > 1:
		return 0, fmt.Errorf("%s %q occurs %d times in the requester's messages; quote more of the one you mean", field, bound(text, 80), found)
	}
	return at, nil
}

// describe is a Compaction in one line for the requester.
func (c Compaction) describe() string {
	if c.Mode == CompactFailed {
		return "context not compacted: " + c.Reason
	}
	return fmt.Sprintf("context compacted (%s): ~%d → ~%d tokens, %d messages folded into a checkpoint", c.Mode, c.BeforeTokens, c.AfterTokens, c.Folded)
}
