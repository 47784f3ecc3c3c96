package agent

import "encoding/json"

// EventType names what happened in a run.
type EventType string

// The events a run emits, in the order they happen within a step.
const (
	EventTextDelta    EventType = "text_delta"    // Text: a piece of the model's answer
	EventMessage      EventType = "message"       // Message: a message appended to the conversation
	EventToolStarted  EventType = "tool_started"  // Call
	EventToolProgress EventType = "tool_progress" // Call.ID, Text
	EventToolFinished EventType = "tool_finished" // Call, Result, IsError
	EventToolRefused  EventType = "tool_refused"  // Call, Verdict
	EventPlanUpdated  EventType = "plan_updated"  // Plan: the whole list
	EventUsage        EventType = "usage"         // Usage of one model request, Model that served it
	EventRetry        EventType = "retry"         // Text: why the provider is retrying
	EventRunFinished  EventType = "run_finished"  // Outcome, Text (final answer)
	// EventContextCompacted: Compaction. The request prefix changed here,
	// and only here (see Config.ContextWindow).
	EventContextCompacted EventType = "context_compacted"
	// EventDeliverables: Deliverables, the whole list the model declared
	// with present (a later declaration replaces it).
	EventDeliverables EventType = "deliverables"
)

// Deliverable is a file the model declared as one of the run's results for
// people (present): a workspace-relative path and what it is. The host
// checked that it existed then; it never copies, runs or sends the file.
type Deliverable struct {
	Path        string `json:"path"`
	Description string `json:"description,omitempty"`
	Bytes       int64  `json:"bytes"`
}

// TodoItem is one entry of the model-maintained plan. A plan has two
// levels at most: an item may be a phase with sub-steps (Steps), which
// have none of their own. A flat plan (no Steps) is the older form.
type TodoItem struct {
	Content string     `json:"content"`
	Status  string     `json:"status"` // pending | in_progress | completed
	Steps   []TodoItem `json:"steps,omitempty"`
}

// Event is one observable step of a run. Only the fields its Type names are
// set. Other packages may define further types (e.g. goals' fleet progress)
// and put their payload in Data.
type Event struct {
	Type    EventType       `json:"type"`
	Step    int             `json:"step,omitempty"`
	Text    string          `json:"text,omitempty"`
	Message *Message        `json:"message,omitempty"`
	Call    *ToolCall       `json:"call,omitempty"`
	Args    json.RawMessage `json:"-"`
	Result  string          `json:"result,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	Verdict *Verdict        `json:"verdict,omitempty"`
	Plan    []TodoItem      `json:"plan,omitempty"`
	Usage   *Usage          `json:"usage,omitempty"`
	// Model names the model a usage event's request went to, as a model
	// reference ("provider/model"), so each call is priced with its own
	// model's prices even when sub-agents run on another model.
	Model string `json:"model,omitempty"`
	// Effort is the reasoning effort a usage event's request asked for
	// ("" = the model's default).
	Effort  string  `json:"effort,omitempty"`
	Outcome Outcome `json:"outcome,omitempty"`
	// Compaction reports an EventContextCompacted.
	Compaction *Compaction `json:"compaction,omitempty"`
	// Deliverables reports an EventDeliverables.
	Deliverables []Deliverable `json:"deliverables,omitempty"`
	// Data carries the payload of event types other packages define (a goal
	// update, a fleet node's progress). It must marshal to JSON.
	Data any `json:"data,omitempty"`
}

// Observer receives a run's events synchronously, in order within each tool
// call. While read-only calls of one batch run in parallel their events may
// arrive from several goroutines at once, so an Observer must be safe for
// concurrent use. It must not block for long: the run waits for it.
type Observer func(Event)

// ModelRef is the reference of the model cfg's requests go to:
// "provider/model", or the provider instance name alone (its default model)
// when cfg names no model.
func ModelRef(cfg Config) string {
	name := ""
	if cfg.Provider != nil {
		name = cfg.Provider.Name()
	}
	if cfg.Model == "" {
		return name
	}
	return name + "/" + cfg.Model
}
