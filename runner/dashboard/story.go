package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"reasonix/goals"
	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

// The task page reads as a story, the way a CI run page does: what was
// asked and by whom, the outcome and why, then the conversation turn by
// turn, each tool call one line in plain words with its outcome and its
// detail behind a disclosure. The raw event log stays one tab away.

// turn is one step of the agent (or of one sub-agent), or a message a
// person sent the task.
type turn struct {
	Key    string // element id: t-<subagent>-<step>, or m<seq> for a person's message
	Title  string
	Person bool // a person's message, not the agent's step
	Items  []storyItem
}

// storyItem is one line of a turn: what the model said, a call and how it
// ended, an approval asked or decided, or a note (a sub-agent started, a
// question asked, the conversation compacted).
type storyItem struct {
	ID      string // element id; a call's line keeps its id when its end replaces it
	Kind    string // say, call, note, approval
	Icon    string // ✓ ✗ ⊘ ▸ …
	Class   string // ok, bad, warn, live
	Text    string // plain words: "ran go test ./..."
	Outcome string // "failed", "refused: …", "running…"
	Args    string // a call's arguments, on demand
	Result  string // a call's result, on demand: its first page when longer
	Seq     int64
	// TaskID and Pages are set when Result was cut: the step's own page
	// (stepPage) has the rest, Pages pages of it.
	TaskID string
	Pages  int
}

// stepPayload is what the story reads of a step event's payload: decoded
// into fields rather than a map, which a page of 500 steps notices.
type stepPayload struct {
	Role      string   `json:"role"`
	Requester string   `json:"requester"`
	Text      string   `json:"text"`
	Subagent  string   `json:"subagent"`
	CallID    string   `json:"call_id"`
	Tool      string   `json:"tool"`
	Args      string   `json:"args"`
	Result    string   `json:"result"`
	IsError   bool     `json:"is_error"`
	Code      string   `json:"code"`
	Reason    string   `json:"reason"`
	Subject   string   `json:"subject"`
	Decision  string   `json:"decision"`
	Approver  string   `json:"approver"`
	Scope     string   `json:"scope"`
	Note      string   `json:"note"`
	Question  string   `json:"question"`
	Step      *float64 `json:"step"`
}

// storyTypes are the events the story tells; the rest (state changes,
// usage, retries, the report) are only in the raw log and the header.
var storyTypes = map[string]bool{"message": true, "tool_started": true, "tool_finished": true, "tool_refused": true,
	"approval_requested": true, "approval_decided": true, "question": true, "context_compacted": true,
	string(goals.EventSubagentStarted): true, string(goals.EventSubagentFinished): true}

// stepOf decodes e's payload for the story; ok is false for an event the
// story does not tell or whose payload is not an object. A field of an
// unexpected type is left empty, the rest still read.
func stepOf(e store.Event) (*stepPayload, bool) {
	if !storyTypes[e.Type] {
		return nil, false
	}
	p := new(stepPayload)
	var ute *json.UnmarshalTypeError
	if err := json.Unmarshal(e.Payload, p); err != nil && !errors.As(err, &ute) {
		return nil, false
	}
	return p, true
}

// turnOf is the turn e belongs to; ok false for an event that is not part
// of the conversation (state changes, usage, the final report).
func turnOf(e store.Event, p *stepPayload) (turn, bool) {
	switch e.Type {
	case "message":
		if p.Role == "user" {
			return turn{Key: fmt.Sprintf("m%d", e.Seq), Title: cmpOr(p.Requester, "someone") + " wrote", Person: true}, true
		}
	case "tool_started", "tool_finished", "tool_refused", "approval_requested", "approval_decided", "question",
		"context_compacted", string(goals.EventSubagentStarted), string(goals.EventSubagentFinished):
	default:
		return turn{}, false
	}
	// Steps count from 0; an event without one (an approval, a question)
	// belongs to the turn it happened in, the latest: Key "" says so.
	if p.Step == nil {
		return turn{Title: "Along the way"}, true
	}
	sub, step := p.Subagent, int(*p.Step)
	title := "Step " + strconv.Itoa(step+1)
	if sub != "" {
		title = "Sub-agent " + sub + " · step " + strconv.Itoa(step+1)
	}
	return turn{Key: "t-" + domID(sub) + "-" + strconv.Itoa(step), Title: title}, true
}

// itemsOf is what e adds to its turn.
func itemsOf(e store.Event, p *stepPayload) []storyItem {
	// A call's start and end share a line, found by its id; a call
	// without one (an old or foreign event) gets a line per event.
	callID := func() string {
		if p.CallID == "" {
			return ""
		}
		return "c-" + domID(p.Subagent+"-"+p.CallID)
	}
	switch e.Type {
	case "message":
		if t := p.Text; t != "" {
			return []storyItem{{Kind: "say", Text: t, Seq: e.Seq}}
		}
	case "tool_started":
		return []storyItem{{ID: callID(), Kind: "call", Icon: "▸", Class: "live", Text: plainCall(p.Tool, p.Args),
			Outcome: "running…", Args: pretty(p.Args), Seq: e.Seq}}
	case "tool_finished":
		it := storyItem{ID: callID(), Kind: "call", Icon: "✓", Class: "ok", Text: plainCall(p.Tool, ""), Result: p.Result, Seq: e.Seq}
		if len(it.Result) > maxDetail {
			it.Result, it.Pages = detailChunk(it.Result, 1)
			it.TaskID = e.TaskID
		}
		if p.IsError {
			it.Icon, it.Class, it.Outcome = "✗", "bad", "failed"
		}
		return []storyItem{it}
	case "tool_refused":
		return []storyItem{{ID: callID(), Kind: "call", Icon: "⊘", Class: "bad", Text: plainCall(p.Tool, ""),
			Outcome: "refused: " + cmpOr(p.Reason, p.Code), Seq: e.Seq}}
	case "approval_requested":
		if p.Tool == "budget" { // a budget card: the task spent its budget and asks for more
			return []storyItem{{Kind: "approval", Icon: "?", Class: "warn", Seq: e.Seq, Text: "spent its budget and asks for more"}}
		}
		return []storyItem{{Kind: "approval", Icon: "?", Class: "warn", Seq: e.Seq,
			Text: "asked for approval to " + callTo(p.Tool, p.Subject)}}
	case "approval_decided":
		it := storyItem{Kind: "approval", Icon: "✓", Class: "ok", Seq: e.Seq}
		switch d := p.Decision; d {
		case "deny":
			it.Icon, it.Class, it.Text = "✗", "bad", "denied"
		case "stop_publish":
			it.Icon, it.Class, it.Text = "✗", "bad", "stopped, publishing what exists"
		case "expired":
			it.Icon, it.Class, it.Text = "⌛", "bad", "nobody decided in time: denied"
		case "allow_task":
			it.Text = "allowed for the rest of the task"
		case "allow_always":
			it.Text = "allowed always"
		default:
			it.Text = "allowed once"
		}
		if by := p.Approver; by != "" {
			it.Text += " by " + by
		}
		if sc := p.Scope; sc != "" {
			it.Text += " for " + sc
		}
		if n := p.Note; n != "" {
			it.Text += ": “" + n + "”"
		}
		return []storyItem{it}
	case "question":
		return []storyItem{{Kind: "note", Icon: "?", Class: "warn", Text: "asked: " + p.Question, Seq: e.Seq}}
	case "context_compacted":
		return []storyItem{{Kind: "note", Icon: "…", Text: "compacted the conversation to fit the model's window", Seq: e.Seq}}
	case string(goals.EventSubagentStarted), string(goals.EventSubagentFinished):
		var s goals.SubagentEvent
		_ = json.Unmarshal(e.Payload, &s) // a payload of another shape names no sub-agent
		text := "started sub-agent " + cmpOr(s.ID, s.Ref)
		if e.Type == string(goals.EventSubagentFinished) {
			text = "sub-agent " + cmpOr(s.ID, s.Ref) + " ended: " + cmpOr(string(s.State), "finished")
			if s.Reason != "" {
				text += " (" + s.Reason + ")"
			}
		}
		return []storyItem{{Kind: "note", Icon: "⑂", Text: text, Seq: e.Seq}}
	}
	return nil
}

// conversation groups evs into turns in the order each turn first
// appears; a call's end replaces its start's line.
func conversation(evs []store.Event) []turn {
	var turns []turn
	index := map[string]int{}
	calls := map[string][2]int{} // call line id → turn, item
	for _, e := range evs {
		p, ok := stepOf(e)
		if !ok {
			continue
		}
		t, ok := turnOf(e, p)
		if !ok {
			continue
		}
		items := itemsOf(e, p)
		if len(items) == 0 && !t.Person {
			continue
		}
		if t.Key == "" {
			if len(turns) > 0 {
				t.Key = turns[len(turns)-1].Key
			} else {
				t.Key = "t-along"
			}
		}
		i, seen := index[t.Key]
		if !seen {
			i = len(turns)
			index[t.Key] = i
			turns = append(turns, t)
		}
		for _, it := range items {
			if it.ID != "" {
				if at, ok := calls[it.ID]; ok {
					old := &turns[at[0]].Items[at[1]]
					it.Text, it.Args = old.Text, old.Args
					*old = it
					continue
				}
				calls[it.ID] = [2]int{i, len(turns[i].Items)}
			}
			turns[i].Items = append(turns[i].Items, it)
		}
	}
	return turns
}

// verbs say what a tool does: as done ("ran") and as asked ("run").
var verbs = map[string][2]string{
	"bash": {"ran", "run"}, "read_file": {"read", "read"}, "write_file": {"wrote", "write"},
	"edit_file": {"edited", "edit"}, "multi_edit": {"edited", "edit"}, "move_file": {"moved", "move"},
	"delete_range": {"deleted lines of", "delete lines of"}, "delete_symbol": {"deleted a declaration in", "delete a declaration in"},
	"glob": {"listed files matching", "list files matching"}, "grep": {"searched for", "search for"},
	"ls": {"listed", "list"}, "code_index": {"looked up declarations", "look up declarations"}, "todo_write": {"updated the plan", "update the plan"},
	"task": {"handed a task to a sub-agent:", "hand a task to a sub-agent:"}, "fleet": {"started a fleet", "start a fleet"},
}

// plainCall says what a call did in a few words: "ran go test ./...",
// "edited docs/x.md". args may be empty (a call's end does not repeat
// them), leaving the tool's verb alone.
func plainCall(tool, args string) string {
	var a map[string]any
	_ = json.Unmarshal([]byte(args), &a) // arguments that are not an object show no subject
	subject := ""
	for _, k := range []string{"command", "path", "file_path", "pattern", "query", "url", "description", "from"} {
		if s, ok := a[k].(string); ok && s != "" {
			subject = s
			break
		}
	}
	return phrase(tool, subject, 0)
}

// callTo is what an approval asks for: "run go test ./...".
func callTo(tool, subject string) string { return phrase(tool, subject, 1) }

func phrase(tool, subject string, form int) string {
	v, ok := verbs[tool]
	verb := v[form]
	if !ok {
		verb = [2]string{"called ", "call "}[form] + tool
	}
	subject = shorten(firstLineOf(subject), 160)
	if subject == "" || tool == "todo_write" {
		return verb
	}
	return verb + " " + subject
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// header is the top of the task page: the outcome in a colour that
// matches it, the reason in a sentence, the question a goal asks, and the
// numbers, each labelled.
type header struct {
	State     store.State
	Tone      string // ok, bad, warn, live: the colour of the outcome
	Headline  string
	Reason    string
	Summary   string
	Answer    string
	Question  string // a blocked goal's question for the requester
	From      string // "from Slack, channel C1" / "from the schedule nightly"
	Durations apitype.Durations
	DurText   string
	PR        string
}

// outcomeOf is the headline and tone of state.
func outcomeOf(s store.State) (headline, tone string) {
	switch s {
	case store.StateSucceeded:
		return "Succeeded", "ok"
	case store.StateFailed:
		return "Failed", "bad"
	case store.StateBlocked:
		return "Blocked: it needs you", "warn"
	case store.StateCancelled:
		return "Cancelled", "bad"
	case store.StateBudgetExhausted:
		return "Stopped: budget reached", "bad"
	case store.StateInterrupted:
		return "Interrupted", "warn"
	case store.StateWaitingApproval:
		return "Waiting for approval", "warn"
	case store.StateWaitingCI:
		return "Waiting for CI", "live"
	case store.StateRunning:
		return "Running", "live"
	}
	return "Queued", "live"
}

// headerOf reads the header from the task and all its events.
func headerOf(t store.Task, evs []store.Event, now time.Time) header {
	h := header{State: t.State}
	h.Headline, h.Tone = outcomeOf(t.State)
	if r := t.Result; r != nil && terminal(t.State) {
		h.Reason, h.Summary, h.Answer = r.Reason, r.Summary, r.FinalAnswer
		if h.Summary == h.Answer {
			h.Summary = ""
		}
	}
	var changes []apitype.StateChange
	for _, e := range evs {
		if s, ok := apitype.StateOf(e.Type, e.Payload); ok {
			changes = append(changes, apitype.StateChange{State: s, At: e.Time})
		}
		switch e.Type {
		case string(goals.EventQuestion):
			var q goals.Question
			if json.Unmarshal(e.Payload, &q) == nil {
				h.Question = q.Question
			}
		case "message":
			// An answer (any message after the question) settles it.
			if h.Question != "" && strings.Contains(string(e.Payload), `"role":"user"`) {
				h.Question = ""
			}
		case "final_report":
			var rep struct {
				PR struct {
					URL string `json:"url"`
				} `json:"pr"`
			}
			if json.Unmarshal(e.Payload, &rep) == nil && rep.PR.URL != "" {
				h.PR = rep.PR.URL
			}
		}
	}
	if t.State != store.StateBlocked {
		h.Question = ""
	}
	if !t.FinishedAt.IsZero() && terminal(t.State) {
		now = t.FinishedAt
	}
	h.Durations = apitype.SplitDurations(t.CreatedAt, changes, now)
	h.DurText = h.Durations.String()
	h.From = fromOf(t)
	return h
}

// fromOf says where a task came from in words.
func fromOf(t store.Task) string {
	kind, name, _ := strings.Cut(t.Requester, ":")
	switch t.Source {
	case store.SourceCron:
		if kind == "schedule" {
			return "the schedule " + name
		}
		return "a schedule"
	case store.SourceWebhook:
		if kind == "webhook" {
			return "the webhook " + name
		}
		return "a webhook"
	}
	where := map[store.Source]string{store.SourceSlack: "Slack", store.SourceTelegram: "Telegram", store.SourceAPI: "the API",
		store.SourceCLI: "the CLI"}[t.Source]
	if where == "" {
		where = string(t.Source)
	}
	for _, n := range t.Notify {
		if n.Transport == string(t.Source) && n.Channel != "" {
			where += ", chat " + n.Channel
			if n.Thread != "" {
				where += " (thread)"
			}
			break
		}
	}
	return where
}

// fileChange is one line of a diff stat: a path and its bar.
type fileChange struct {
	Path, Bar string
	Added     int
	Removed   int
}

// filesOf reads `git diff --stat` lines (" path | 12 ++++--") into files.
func filesOf(stat string) []fileChange {
	var out []fileChange
	for _, l := range strings.Split(stat, "\n") {
		path, bar, ok := strings.Cut(l, "|")
		if !ok {
			continue
		}
		f := fileChange{Path: strings.TrimSpace(path), Bar: strings.TrimSpace(bar)}
		f.Added, f.Removed = strings.Count(bar, "+"), strings.Count(bar, "-")
		out = append(out, f)
	}
	return out
}
