package goals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"reasonix/agent"
)

// Tools returns the parent-side sub-agent tools: task, fleet,
// read_subagent_result and list_subagents. A child below the host's
// MaxDepth gets its own set, bound to its lineage (nested.go): its readers
// see only its descendants, so siblings never see each other.
func (h *Host) Tools() []agent.Tool {
	return h.scopedTools(nil)
}

// The tools carry the child that holds them; nil is the parent run.
type taskTool struct {
	h      *Host
	parent *childRun
}

func (taskTool) Name() string { return "task" }
func (taskTool) Description() string {
	return "Run one sub-agent on a self-contained task and return its answer. The sub-agent sees only the prompt (and the workspace), " +
		"nothing of this conversation, so the prompt must say everything it needs. Delegation costs several times the tokens of doing the work yourself; " +
		"use it only for work that is large and separable."
}
func (taskTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{
"prompt":{"type":"string"},"profile":{"type":"string"},
"write_paths":{"type":"array","items":{"type":"string"},"description":"workspace-relative paths the sub-agent may write; omitted = the whole workspace"},
"model":{"type":"string"},
"effort":{"type":"string","enum":["minimal","low","medium","high","max"],"description":"reasoning effort of the sub-agent; omitted = the configured default"},
"continue_from":{"type":"string","description":"ref of a partial or failed sub-agent to continue: it resumes its own transcript with prompt as the next turn"},
"fork_from":{"type":"string","description":"ref of a finished sub-agent whose transcript a new sub-agent starts from, with prompt as the next turn"}},"required":["prompt"],"additionalProperties":false}`)
}

func (t taskTool) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	var it FleetItem
	if err := decodeStrict("task", raw, &it); err != nil {
		return "", err
	}
	if it.AdoptRef != "" || it.ID != "" || len(it.DependsOn) > 0 {
		return "", fmt.Errorf("task: id, depends_on and adopt_ref belong to fleet items")
	}
	it.ID = "task"
	g, err := preflight(FleetSpec{Items: []FleetItem{it}})
	if err != nil {
		return "", fmt.Errorf("task: %w", err)
	}
	res, err := t.h.runGraph(ctx, g, t.parent)
	if err != nil {
		return "", fmt.Errorf("task: %w", err)
	}
	n := res.Nodes[0]
	rec, _ := t.h.lookup(n.Ref)
	head := fmt.Sprintf("sub-agent %s: %s", n.Ref, n.State)
	if n.Reason != "" {
		head += " (reason=" + n.Reason + ")"
	}
	return agent.BoundResult(head+"\n\n"+rec.Answer, agent.MaxToolResult-1024) + readMoreHint(n.Ref, len(rec.Answer)), nil
}

type fleetTool struct {
	h      *Host
	parent *childRun
}

func (fleetTool) Name() string { return "fleet" }
func (fleetTool) Description() string {
	return "Run 2 to 64 sub-agents as a small dependency graph. Each item: id, prompt, optional depends_on (ids whose answers it needs; " +
		"they arrive in an <upstream-results> block), profile, write_paths, model, effort (reasoning effort), or adopt_ref to reuse a finished sub-agent's answer. " +
		"Items run in parallel where the graph allows; writers with overlapping write_paths never run at once. A failed item skips " +
		"everything downstream of it; fail_fast stops starting new items after any failure. continue_from resumes a partial or failed " +
		"sub-agent's transcript; fork_from starts from a finished one's."
}
func (fleetTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{
"items":{"type":"array","minItems":2,"maxItems":64,"items":{"type":"object","properties":{
 "id":{"type":"string"},"prompt":{"type":"string"},
 "depends_on":{"type":"array","items":{"type":"string"}},
 "profile":{"type":"string"},
 "write_paths":{"type":"array","items":{"type":"string"}},
 "model":{"type":"string"},
 "effort":{"type":"string","enum":["minimal","low","medium","high","max"]},
 "adopt_ref":{"type":"string"},
 "continue_from":{"type":"string"},
 "fork_from":{"type":"string"}},"additionalProperties":false}},
"fail_fast":{"type":"boolean"}},"required":["items"],"additionalProperties":false}`)
}

func (t fleetTool) Execute(ctx context.Context, raw json.RawMessage) (string, error) {
	g, err := ParseFleet(raw)
	if err != nil {
		return "", err
	}
	res, err := t.h.runGraph(ctx, g, t.parent)
	if err != nil {
		return "", err
	}
	return t.h.aggregate(res), nil
}

// aggregate is the fleet tool's result: headed by how many tasks were
// answered, then each node with a fair share of one preview budget.
func (h *Host) aggregate(res FleetResult) string {
	answers := make([]string, len(res.Nodes))
	sizes := make([]int, len(res.Nodes))
	for i, n := range res.Nodes {
		if rec, ok := h.lookup(n.Ref); ok {
			answers[i] = rec.Answer
		}
		sizes[i] = len(answers[i])
	}
	shares := fairShares(sizes, agent.MaxToolResult-4096)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d of %d tasks answered\n", res.FleetID, res.Answered, len(res.Nodes))
	for i, n := range res.Nodes {
		fmt.Fprintf(&b, "\n## %s: %s", n.ID, n.State)
		if n.Reason != "" {
			fmt.Fprintf(&b, " reason=%s", n.Reason)
		}
		if n.Ref != "" {
			fmt.Fprintf(&b, " ref=%s", n.Ref)
		}
		b.WriteString("\n")
		if answers[i] == "" {
			b.WriteString(n.Summary + "\n")
			continue
		}
		b.WriteString(agent.BoundResult(answers[i], shares[i]) + readMoreHint(n.Ref, len(answers[i])) + "\n")
	}
	return b.String()
}

func readMoreHint(ref string, total int) string {
	return fmt.Sprintf("\n[full answer: %d bytes; page it with read_subagent_result ref=%s]", total, ref)
}

type readResultTool struct {
	h      *Host
	parent *childRun
}

var _ agent.ReadOnlyTool = readResultTool{}

const (
	defaultPage = 16 << 10
	maxPage     = 24 << 10
)

func (readResultTool) Name() string   { return "read_subagent_result" }
func (readResultTool) ReadOnly() bool { return true }
func (readResultTool) Description() string {
	return "Read a sub-agent's full final answer by its ref, paged by UTF-8 byte offset (limit defaults to 16 KiB, at most 24 KiB)."
}
func (readResultTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"ref":{"type":"string"},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer","minimum":1}},"required":["ref"],"additionalProperties":false}`)
}

func (t readResultTool) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var a struct {
		Ref    string `json:"ref"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decodeStrict("read_subagent_result", raw, &a); err != nil {
		return "", err
	}
	rec, ok := t.h.lookupIn(a.Ref, t.parent)
	if !ok {
		return "", fmt.Errorf("read_subagent_result: no sub-agent %q in this conversation; list_subagents shows the known refs", a.Ref)
	}
	page, next, err := pageUTF8(rec.Answer, a.Offset, a.Limit)
	if err != nil {
		return "", fmt.Errorf("read_subagent_result: %w", err)
	}
	return fmt.Sprintf("ref=%s status=%s offset=%d next_offset=%d total_bytes=%d complete=%t\n\n%s",
		rec.Ref, rec.State, a.Offset, next, len(rec.Answer), next == len(rec.Answer), page), nil
}

// pageUTF8 returns s[offset:end] where end is at most offset+limit and on a
// rune boundary. An offset inside a rune or past the end is an error.
func pageUTF8(s string, offset, limit int) (string, int, error) {
	if limit <= 0 {
		limit = defaultPage
	}
	limit = min(limit, maxPage)
	switch {
	case offset < 0 || offset > len(s):
		return "", 0, fmt.Errorf("offset %d is outside the answer (0 to %d bytes)", offset, len(s))
	case offset < len(s) && !utf8.RuneStart(s[offset]):
		return "", 0, fmt.Errorf("offset %d falls inside a UTF-8 character; use a next_offset from an earlier page", offset)
	}
	end := min(offset+limit, len(s))
	for end > offset && end < len(s) && !utf8.RuneStart(s[end]) {
		end--
	}
	if end == offset && offset < len(s) { // a limit smaller than one rune: take the rune
		_, size := utf8.DecodeRuneInString(s[offset:])
		end = offset + size
	}
	return s[offset:end], end, nil
}

type listSubagentsTool struct {
	h      *Host
	parent *childRun
}

var _ agent.ReadOnlyTool = listSubagentsTool{}

func (listSubagentsTool) Name() string   { return "list_subagents" }
func (listSubagentsTool) ReadOnly() bool { return true }
func (listSubagentsTool) Description() string {
	return "List the sub-agents this conversation ran, newest first, with their refs, so finished work can be read or adopted instead of re-run."
}
func (listSubagentsTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
}

func (t listSubagentsTool) Execute(context.Context, json.RawMessage) (string, error) {
	var recs []ChildRecord
	for _, r := range t.h.newest() {
		if t.h.inLineage(r, t.parent) {
			recs = append(recs, r)
		}
	}
	if len(recs) == 0 {
		return "no sub-agents have run in this conversation", nil
	}
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%s id=%s state=%s", r.Ref, r.ID, r.State)
		if r.Parent != "" {
			fmt.Fprintf(&b, " parent=%s", r.Parent)
		}
		if retryable(r) && len(r.History) > 0 {
			b.WriteString(" retryable=true")
		}
		if r.Reason != "" {
			fmt.Fprintf(&b, " reason=%s", r.Reason)
		}
		fmt.Fprintf(&b, " bytes=%d: %s\n", len(r.Answer), strings.ReplaceAll(preview(r.Answer, 120), "\n", " "))
	}
	return b.String(), nil
}

// RunTask runs one sub-agent of profile on prompt exactly as the task tool
// does (the same child construction, receipts, claim adjudication, cost,
// counters and events), for a caller other than the model's task tool: the
// run_skill tool's sub-agent skills. id names the item in the fleet
// events. The record's Answer is the child's answer; a failed child is a
// record, not an error.
func (h *Host) RunTask(ctx context.Context, id, prompt, profile string) (ChildRecord, error) {
	g, err := preflight(FleetSpec{Items: []FleetItem{{ID: id, Prompt: prompt, Profile: profile}}})
	if err != nil {
		return ChildRecord{}, fmt.Errorf("goals: %w", err)
	}
	res, err := h.runGraph(ctx, g, nil)
	if err != nil {
		return ChildRecord{}, fmt.Errorf("goals: %w", err)
	}
	n := res.Nodes[0]
	rec, _ := h.lookup(n.Ref)
	rec.Ref, rec.State, rec.Reason = n.Ref, n.State, n.Reason
	return rec, nil
}
