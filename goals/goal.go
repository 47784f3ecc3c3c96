package goals

import (
	"fmt"
	"strings"
)

// Goal is a task contract: the objective plus the optional sections that
// bound autonomous work. A section left empty is inferred by the model from
// the conversation and the workspace; the goal block says so.
type Goal struct {
	// ID names the goal in update_goal calls; empty means Config.NewID picks one.
	ID string `json:"id"`
	// Objective is what the goal must achieve; required.
	Objective    string `json:"objective"`
	Context      string `json:"context,omitempty"`
	Request      string `json:"request,omitempty"`
	OutputFormat string `json:"output_format,omitempty"`
	Constraints  string `json:"constraints,omitempty"`
	PausePolicy  string `json:"pause_policy,omitempty"`
	// PlanFirst runs a read-only planning pass whose plan must be approved
	// (Config.Approver) before anything is changed.
	PlanFirst bool `json:"plan_first,omitempty"`
}

// defaultPausePolicy is the pause rule of seed §3.7: ordinary uncertainty is
// handled with defaults, not by stopping.
const defaultPausePolicy = "Pause only for irreversible or externally visible operations, a change of scope, " +
	"or information only the requester has. Handle ordinary uncertainty with a sensible default and report it as an assumption."

// maxGoalText bounds each section so one goal block cannot crowd the context.
const maxGoalText = 16 << 10

// validate checks the goal's fields.
func (g Goal) validate() error {
	if strings.TrimSpace(g.Objective) == "" {
		return fmt.Errorf("goals: goal objective is required")
	}
	for name, v := range map[string]string{"objective": g.Objective, "context": g.Context, "request": g.Request,
		"output_format": g.OutputFormat, "constraints": g.Constraints, "pause_policy": g.PausePolicy} {
		if len(v) > maxGoalText {
			return fmt.Errorf("goals: goal %s is %d bytes; keep it under %d", name, len(v), maxGoalText)
		}
	}
	return nil
}

// block renders the goal block that opens every user turn of a goal. It is
// deliberately kept out of the system prompt: the system prompt stays
// byte-stable across goals so provider prompt caches keep working.
func (s *State) block() string {
	g := s.Goal
	var b strings.Builder
	fmt.Fprintf(&b, "<goal id=%q revision=\"%d\">\n", g.ID, s.Revision)
	fmt.Fprintf(&b, "Objective: %s\n", strings.TrimSpace(g.Objective))
	section := func(name, v, inferred string) {
		if v = strings.TrimSpace(v); v == "" {
			v = inferred
		}
		fmt.Fprintf(&b, "%s: %s\n", name, v)
	}
	const infer = "(not given: infer it from the conversation and the workspace)"
	section("Context", g.Context, infer)
	section("Request", g.Request, infer)
	section("Output format", g.OutputFormat, infer)
	section("Constraints", g.Constraints, infer)
	section("Pause policy", g.PausePolicy, defaultPausePolicy)
	if open := openItems(s.Plan); len(s.Plan) > 0 {
		fmt.Fprintf(&b, "Plan: %d of %d items completed", len(s.Plan)-len(open), len(s.Plan))
		if len(open) > 0 {
			fmt.Fprintf(&b, "; open: %s", strings.Join(open, "; "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Progress: %d turns so far.\n", s.Turns)
	b.WriteString("Completion requires the request, output format, constraints and relevant verification to be satisfied, " +
		"or explicitly reported as unverified. Report the end with update_goal: action \"complete\" when done, " +
		"action \"blocked\" (with a question when only the requester can unblock you) when you cannot go on.\n")
	b.WriteString("</goal>")
	return b.String()
}
