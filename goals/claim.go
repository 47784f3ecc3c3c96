package goals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"reasonix/agent"
)

const toolCompleteSubtask = "complete_subtask"

// Subtask statuses, from best to worst. The host may lower a status, never
// raise it.
const (
	subtaskComplete = "complete"
	subtaskPartial  = "partial"
	subtaskFailed   = "failed"
)

// Criterion statuses. A child claims satisfied or unsatisfied; the host
// lowers an unbacked satisfied claim to unverified.
const (
	CriterionSatisfied   = "satisfied"
	CriterionUnsatisfied = "unsatisfied"
	CriterionUnverified  = "unverified"
)

// Criterion is one acceptance criterion of a completion report, with the
// evidence the child cites: Kind "verification" cites Commands it ran,
// "diff" cites Paths it wrote, "files" Paths it wrote or read, "manual" a
// Note (never self-backing).
type Criterion struct {
	Criterion string   `json:"criterion"`
	Status    string   `json:"status"`
	Kind      string   `json:"kind"`
	Commands  []string `json:"commands,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	Note      string   `json:"note,omitempty"`
	// Claimed is the status the child gave when the host lowered it, and
	// Downgrade says why; both empty for an upheld criterion.
	Claimed   string `json:"claimed,omitempty"`
	Downgrade string `json:"downgrade,omitempty"`
}

// CompletionReport is a writer child's complete_subtask claim after
// adjudication. Claimed is the status the child gave when the host lowered
// it.
type CompletionReport struct {
	Status     string      `json:"status"`
	Claimed    string      `json:"claimed,omitempty"`
	Summary    string      `json:"summary"`
	Criteria   []Criterion `json:"acceptance_criteria"`
	Unresolved []string    `json:"unresolved,omitempty"`
}

type completeSubtask struct{ run *childRun }

func (*completeSubtask) Name() string { return toolCompleteSubtask }
func (*completeSubtask) Description() string {
	return "Close your sub-task with a checkable claim: status, summary, the acceptance criteria with evidence " +
		"(kind verification: the exact commands you ran; diff/files: the paths; manual: a note), and what is unresolved."
}
func (*completeSubtask) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{
"status":{"type":"string","enum":["complete","partial","failed"]},
"summary":{"type":"string"},
"acceptance_criteria":{"type":"array","items":{"type":"object","properties":{
 "criterion":{"type":"string"},
 "status":{"type":"string","enum":["satisfied","unsatisfied"]},
 "kind":{"type":"string","enum":["verification","diff","files","manual"]},
 "commands":{"type":"array","items":{"type":"string"}},
 "paths":{"type":"array","items":{"type":"string"}},
 "note":{"type":"string"}},
 "required":["criterion","status","kind"],"additionalProperties":false}},
"unresolved":{"type":"array","items":{"type":"string"}}},
"required":["status","summary","acceptance_criteria"],"additionalProperties":false}`)
}

func (t *completeSubtask) Execute(_ context.Context, raw json.RawMessage) (string, error) {
	var r CompletionReport
	if err := decodeStrict(toolCompleteSubtask, raw, &r); err != nil {
		return "", err
	}
	if !slices.Contains([]string{subtaskComplete, subtaskPartial, subtaskFailed}, r.Status) {
		return "", fmt.Errorf("complete_subtask: status must be complete, partial or failed, got %q", r.Status)
	}
	if strings.TrimSpace(r.Summary) == "" {
		return "", errors.New("complete_subtask: summary must not be empty")
	}
	for i, c := range r.Criteria {
		if c.Status != CriterionSatisfied && c.Status != CriterionUnsatisfied {
			return "", fmt.Errorf("complete_subtask: acceptance_criteria[%d]: status must be satisfied or unsatisfied", i)
		}
		if !slices.Contains([]string{"verification", "diff", "files", "manual"}, c.Kind) {
			return "", fmt.Errorf("complete_subtask: acceptance_criteria[%d]: kind must be verification, diff, files or manual", i)
		}
		if c.Claimed != "" || c.Downgrade != "" {
			return "", fmt.Errorf("complete_subtask: acceptance_criteria[%d]: claimed and downgrade are set by the host", i)
		}
	}
	r.Claimed = ""
	t.run.mu.Lock()
	t.run.report = &r
	t.run.mu.Unlock()
	return "Completion report recorded; the host will check it against its receipts. Now give a short final answer.", nil
}

// adjudicate checks every satisfied criterion against the host's receipts
// and lowers what they cannot back; a report holding a lowered or
// unsatisfied criterion, or unresolved work, cannot stay complete. It only
// ever lowers.
func (h *Host) adjudicate(r *CompletionReport, rc Receipts) {
	h.reports.Add(1)
	ran := map[string]int{}
	for _, c := range rc.Commands {
		ran[normalizeCommand(c.Command)] = c.Exit
	}
	touched := map[string]string{}
	for _, p := range rc.Read {
		touched[p] = "read"
	}
	for _, p := range rc.Written {
		touched[p] = "written"
	}
	allGood := true
	for i := range r.Criteria {
		c := &r.Criteria[i]
		if c.Status != CriterionSatisfied {
			allGood = false
			continue
		}
		if why := h.unbacked(c, ran, touched); why != "" {
			c.Claimed, c.Status, c.Downgrade = c.Status, CriterionUnverified, why
			h.downgrades.Add(1)
			allGood = false
		}
	}
	if r.Status == subtaskComplete && (!allGood || len(r.Unresolved) > 0) {
		r.Claimed, r.Status = r.Status, subtaskPartial
		h.falseDone.Add(1)
	}
}

// unbacked says why the receipts do not back a satisfied criterion, or "".
func (h *Host) unbacked(c *Criterion, ran map[string]int, touched map[string]string) string {
	switch c.Kind {
	case "verification":
		if len(c.Commands) == 0 {
			return "no command cited"
		}
		for _, cmd := range c.Commands {
			exit, ok := ran[normalizeCommand(cmd)]
			switch {
			case !ok:
				return fmt.Sprintf("the host recorded no run of %q", cmd)
			case exit != 0:
				return fmt.Sprintf("%q exited with code %d", cmd, exit)
			}
		}
	case "diff", "files":
		if len(c.Paths) == 0 {
			return "no path cited"
		}
		for _, p := range c.Paths {
			r, err := h.resolve(p)
			seen := touched[h.relPath(r)]
			if err != nil || seen == "" || c.Kind == "diff" && seen != "written" {
				return fmt.Sprintf("the host saw no %s of %q", map[bool]string{true: "write", false: "read or write"}[c.Kind == "diff"], filepath.ToSlash(p))
			}
		}
	default:
		return "a manual note is not evidence the host can check"
	}
	return ""
}

func normalizeCommand(s string) string { return strings.Join(strings.Fields(s), " ") }

// composeAnswer is what the parent (and dependents) receive from a child:
// the adjudicated claim, the child's own prose, then the host's receipts.
func composeAnswer(prose string, r *CompletionReport, rc Receipts) string {
	var b strings.Builder
	if r != nil {
		fmt.Fprintf(&b, "status: %s", r.Status)
		if r.Claimed != "" {
			fmt.Fprintf(&b, " (claimed %s; lowered by the host)", r.Claimed)
		}
		fmt.Fprintf(&b, "\nsummary: %s\n", r.Summary)
		for _, c := range r.Criteria {
			fmt.Fprintf(&b, "- [%s] %s", c.Status, c.Criterion)
			if c.Downgrade != "" {
				fmt.Fprintf(&b, " (claimed %s: %s)", c.Claimed, c.Downgrade)
			}
			b.WriteString("\n")
		}
		for _, u := range r.Unresolved {
			fmt.Fprintf(&b, "- unresolved: %s\n", u)
		}
		b.WriteString("\n")
	}
	b.WriteString(strings.TrimSpace(prose))
	if len(rc.Commands)+len(rc.Written)+len(rc.Violations) > 0 {
		b.WriteString("\n\nhost receipts:")
		for _, c := range rc.Commands {
			fmt.Fprintf(&b, "\n- ran: %s (exit %d)", c.Command, c.Exit)
		}
		for _, p := range rc.Written {
			fmt.Fprintf(&b, "\n- wrote: %s", p)
		}
		for _, p := range rc.Violations {
			fmt.Fprintf(&b, "\n- refused write outside the claim: %s", p)
		}
	}
	return b.String()
}

var _ agent.Tool = (*completeSubtask)(nil)
