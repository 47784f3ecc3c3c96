package agent

import (
	"context"
	"fmt"
	"strings"
)

// budgets are the internal construction budgets of a compaction, in tokens
// (seed §3.6). They follow the window down, so a model with a window of a
// few thousand tokens compacts too.
type budgets struct {
	tail      int // the verbatim recent tail
	summary   int // the digest (the summary call's output cap)
	task      int // the pinned task; a larger one is bounded
	userTurn  int // one kept requester turn
	userTurns int // all kept requester turns together
	marked    int // all [[keep]] turns together (keep.go)
	failures  int // all kept failure lines together (keep.go)
}

func budgetsFor(window int) budgets {
	return budgets{
		tail:      min(max(window/10, 32_000), 96_000, window/4),
		summary:   min(16_000, max(window/8, 64)),
		task:      min(32_000, window/8),
		userTurn:  min(1500, window/40),
		userTurns: min(8192, window/20),
		marked:    window * 15 / 100,
		failures:  min(2048, window/32),
	}
}

// foldPlan is one way to compact: what stays pinned, what the digest
// replaces, and what stays verbatim on either side of it.
type foldPlan struct {
	task     string    // the pinned first user message, bounded
	prior    string    // the digest in force, "" before the first compaction
	head     []Message // verbatim before the digest (a named range's left side)
	fold     []Message // what the new digest replaces (after prior)
	tail     []Message // verbatim recent tail
	kept     []string  // requester turns kept verbatim, oldest first
	dropped  int       // requester turns only the digest carries
	failures []string  // failure lines kept verbatim (keep.go)
	headIdx  []int     // conversation indexes of head
	tailIdx  []int     // and of tail
	focus    string    // what the requester asked the digest to keep
}

// foldSource is the model's current view of the conversation, laid out
// for a fold: the pinned task, the digest in force and everything after
// them that is still verbatim, with each message's conversation index.
type foldSource struct {
	task, prior    string
	kept, failures []string
	body           []Message
	idx            []int
	convLen        int // conversation messages so far (checkpoints not counted)
}

func (a *Agent) foldSource(b budgets) foldSource {
	w := &a.window
	var s foldSource
	rest := a.messages[w.mark+1:]
	s.body = append(append(make([]Message, 0, len(w.body)+len(rest)), w.body...), rest...)
	s.idx = append(make([]int, 0, len(s.body)), w.bodyIdx...)
	s.idx = append(s.idx, seq(w.convLen, w.convLen+len(rest))...)
	s.convLen = w.convLen + len(rest)
	if w.cp != nil {
		s.task, s.prior, s.kept, s.failures = w.cp.Task, w.digest, w.cp.Kept, w.cp.Failures
	} else {
		for i := range s.body {
			if s.body[i].Role == RoleUser {
				s.task = s.body[i].Content
				s.body = append(s.body[:i:i], s.body[i+1:]...)
				s.idx = append(s.idx[:i:i], s.idx[i+1:]...)
				break
			}
		}
	}
	if estimateText(s.task) > b.task && !(keepMarked(s.task) && estimateText(s.task) <= b.marked) {
		s.task = BoundResult(s.task, tokenBytes(b.task))
	}
	return s
}

// plan splits the model's current view of the conversation for a
// compaction whose verbatim tail spends at most tailBudget tokens. With
// keepLast the last exchange (an assistant message and its tool results,
// or a user message) stays even when it alone is larger.
func (a *Agent) plan(b budgets, tailBudget int, keepLast bool) foldPlan {
	src := a.foldSource(b)
	body := src.body
	start, spent := len(body), 0
	for i := len(body) - 1; i >= 0; i-- {
		spent += estimateMessage(&body[i])
		if spent > tailBudget {
			break
		}
		start = i
	}
	// A tail never opens with tool results: their call would be folded.
	for start < len(body) && body[start].Role == RoleTool {
		start++
	}
	if keepLast && start == len(body) {
		for start > 0 {
			start--
			if body[start].Role != RoleTool {
				break
			}
		}
	}
	return a.planSplit(b, &src, 0, start)
}

// planSplit is the plan that folds src.body[from:to] and keeps the rest
// verbatim. Neither side of the fold may open with tool results.
func (a *Agent) planSplit(b budgets, src *foldSource, from, to int) foldPlan {
	p := foldPlan{task: src.task, prior: src.prior}
	p.head, p.fold, p.tail = src.body[:from], src.body[from:to], src.body[to:]
	p.headIdx, p.tailIdx = src.idx[:from], src.idx[to:]
	turns := append([]string(nil), src.kept...)
	for i := range p.fold {
		if p.fold[i].Role == RoleUser {
			turns = append(turns, p.fold[i].Content)
		}
	}
	p.kept, p.dropped = keepTurns(b, p.task, turns)
	p.failures = keepFailures(b, src.failures, p.fold)
	return p
}

// measure estimates the whole request a plan with digest would send.
func (a *Agent) measure(p *foldPlan, digest string) int {
	n := a.fixedTokens() + messageOverhead + estimateText(digestMessage(p.kept, p.failures, digest)) + estimateMessages(p.head) + estimateMessages(p.tail)
	if p.task != "" {
		n += messageOverhead + estimateText(p.task)
	}
	return n
}

// fits is the acceptance rule: at most half the window, smaller than the
// source and below the trigger. Candidates are never padded toward half.
// When what every request carries (system prompt, tools, task, a digest)
// already fills half the window, nothing could land there, and a candidate
// below the trigger still beats failing at the provider.
func (a *Agent) fits(after, before int) bool {
	if after >= before || after >= a.trigger() {
		return false
	}
	return after <= a.cfg.ContextWindow/2 || a.crowded()
}

// crowded reports whether the fixed part of every request leaves no room
// under half the window.
func (a *Agent) crowded() bool {
	b := budgetsFor(a.cfg.ContextWindow)
	return a.fixedTokens()+min(estimateText(a.firstUser()), b.task)+b.summary >= a.cfg.ContextWindow/2
}

// compact runs the summary transaction: the model's digest with the normal
// tail when it fits, else a deterministic digest with ever shorter tails.
// Either way the task stays pinned. The error is only ever the end of ctx.
func (a *Agent) compact(ctx context.Context, step int) (Usage, error) {
	before := a.estimate()
	b := budgetsFor(a.cfg.ContextWindow)
	p := a.plan(b, a.tailRoom(b), true)
	var (
		spent  Usage
		reason string
	)
	if len(p.fold) == 0 {
		reason = "nothing to summarize outside the recent tail"
	} else {
		digest, u, err := a.summarize(ctx, step, &p, b)
		spent = u
		switch {
		case ctx.Err() != nil:
			return spent, context.Cause(ctx)
		case err != nil:
			reason = err.Error()
		default:
			after := a.measure(&p, digest)
			if a.fits(after, before) {
				a.commit(step, &p, digest, Compaction{Mode: CompactSummary, BeforeTokens: before, AfterTokens: after})
				return spent, nil
			}
			reason = fmt.Sprintf("the summary left a %d-token prompt (window %d, trigger %d)", after, a.cfg.ContextWindow, a.trigger())
		}
	}
	room := a.tailRoom(b)
	for _, t := range []struct {
		budget   int
		keepLast bool
	}{{room / 2, true}, {room / 8, true}, {0, false}} {
		p := a.plan(b, t.budget, t.keepLast)
		digest := fallbackDigest(&p, b.summary)
		if after := a.measure(&p, digest); a.fits(after, before) {
			a.commit(step, &p, digest, Compaction{Mode: CompactFallback, Reason: reason, BeforeTokens: before, AfterTokens: after})
			return spent, nil
		}
	}
	a.window.failed = true
	a.cfg.Observer(Event{Type: EventContextCompacted, Step: step, Compaction: &Compaction{
		Mode: CompactFailed, Reason: strings.TrimPrefix(reason+"; "+errNothingFits.Error(), "; "),
		BeforeTokens: before, AfterTokens: before, Window: a.cfg.ContextWindow, Trigger: a.trigger()}})
	return spent, nil
}

// tailRoom is the tail budget that leaves room, under half the window, for
// what every request carries: the system prompt and tools, the pinned task
// and a digest of the full summary budget.
func (a *Agent) tailRoom(b budgets) int {
	task := 0
	if w := &a.window; w.cp != nil {
		task = estimateText(w.cp.Task)
	} else {
		task = min(estimateText(a.firstUser()), b.task)
	}
	return max(min(b.tail, a.cfg.ContextWindow/2-a.fixedTokens()-task-b.summary-4*messageOverhead), 0)
}

// firstUser is the first user message the model sees, "" when none.
func (a *Agent) firstUser() string {
	for _, m := range a.window.prefix {
		if m.Role == RoleUser {
			return m.Content
		}
	}
	for _, m := range a.messages[a.window.mark+1:] {
		if m.Role == RoleUser {
			return m.Content
		}
	}
	return ""
}

// commit appends the checkpoint to the conversation and makes it the
// model's view from now on.
func (a *Agent) commit(step int, p *foldPlan, digest string, c Compaction) {
	cp := &Checkpoint{Task: p.task, Kept: p.kept, Failures: p.failures}
	w := &a.window
	convLen := w.convLen + len(a.messages) - w.mark - 1
	idx := append(append(make([]int, 0, len(p.headIdx)+len(p.tailIdx)), p.headIdx...), p.tailIdx...)
	if sp := spans(idx); len(p.head) == 0 && (len(sp) == 0 || len(sp) == 1 && sp[0][1] == convLen) {
		cp.Tail = len(p.tail) // the layout every version reads
	} else {
		cp.Spans, cp.DigestAt = sp, len(p.head)
	}
	body := append(append(make([]Message, 0, len(idx)), p.head...), p.tail...)
	a.appendMessage(step, Message{Role: RoleCheckpoint, Content: digest, Checkpoint: cp})
	w.mark, w.prefix, w.cp, w.digest = len(a.messages)-1, checkpointPrefix(cp, digest, body), cp, digest
	w.body, w.bodyIdx, w.convLen = body, idx, convLen
	w.sentTokens = 0 // the provider's last count described the old view
	c.Window, c.Trigger = a.cfg.ContextWindow, a.trigger()
	if c.AfterTokens > c.Window/2 {
		c.Reason = strings.TrimPrefix(c.Reason+fmt.Sprintf("; over half the window: the system prompt and tools alone take about %d tokens", a.fixedTokens()), "; ")
	}
	c.Folded, c.KeptTurns, c.DroppedTurns = len(p.fold), len(p.kept), p.dropped
	if p.dropped > 0 {
		c.Warning = fmt.Sprintf("%d of the requester's messages were folded into the digest (past the retention budget); "+
			"start a message with %s to keep it verbatim", p.dropped, KeepMarker)
	}
	a.cfg.Observer(Event{Type: EventContextCompacted, Step: step, Compaction: &c})
}

// fallbackDigest is the host's own digest of a plan, for when the model's
// summary failed or did not fit: the prior digest and one line per folded
// step, newest kept first, within the summary budget. It loses detail but
// never the task, which stays pinned. Only the lines that fit are built.
func fallbackDigest(p *foldPlan, budget int) string {
	limit := tokenBytes(budget)
	head := "## Done so far\n(The model's summary was not available; this is the host's record of the folded steps.)\n"
	prior := ""
	if p.prior != "" {
		prior = "## Earlier digest\n" + BoundResult(p.prior, limit/3) + "\n\n"
	}
	room := limit - len(head) - len(prior) - 64
	var kept []string
	for i := len(p.fold) - 1; i >= 0 && room > 0; i-- {
		lines := stepLines(&p.fold[i])
		for j := len(lines) - 1; j >= 0; j-- {
			if room -= len(lines[j]) + 1; room < 0 {
				kept = append(kept, fmt.Sprintf("- (%d earlier messages omitted)", i+1))
				break
			}
			kept = append(kept, lines[j])
		}
	}
	var b strings.Builder
	b.Grow(limit)
	b.WriteString(prior + head)
	for i := len(kept) - 1; i >= 0; i-- {
		b.WriteString(kept[i])
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}

// excerpt is the start of s with its white space collapsed, at most n bytes.
func excerpt(s string, n int) string {
	if len(s) > 2*n {
		s = validPrefix(s[:2*n])
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = validPrefix(s[:n]) + "…"
	}
	return s
}

// stepLines describes one folded message in a line or two.
func stepLines(m *Message) []string {
	switch m.Role {
	case RoleUser:
		return []string{"- requester: " + excerpt(m.Content, 300)}
	case RoleTool:
		return []string{"  → " + m.Name + ": " + excerpt(m.Content, 200)}
	case RoleAssistant:
		var out []string
		if strings.TrimSpace(m.Content) != "" {
			out = append(out, "- assistant: "+excerpt(m.Content, 300))
		}
		for _, c := range m.ToolCalls {
			out = append(out, "- called "+c.Name+" "+excerpt(c.Arguments, 160))
		}
		return out
	}
	return nil
}
