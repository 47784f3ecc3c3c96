package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"reasonix/agent"
	"reasonix/runner/apitype"
	"reasonix/runner/store"
)

// eventItem is one step of a task as the page shows it: a title line, an
// optional body, and detail collapsed behind a <details>. The same template
// renders it on the page and for the live stream, so both look alike.
type eventItem struct {
	Seq    int64
	Type   string
	Time   time.Time
	Class  string
	Title  string
	Text   string
	Detail string
	Code   string
	Report map[string]any
	// TaskID and Pages are set when Detail was cut: the step's own page
	// (stepPage) has the rest, Pages pages of it.
	TaskID string
	Pages  int
}

// maxDetail caps the detail shown for one event on a page; the step's own
// page shows the rest the same amount at a time.
const maxDetail = 16 << 10

// itemOf is the event as the task page shows it: its detail cut to the
// first page.
func itemOf(e store.Event) eventItem {
	it := fullItemOf(e)
	if len(it.Detail) > maxDetail {
		it.Detail, it.Pages = detailChunk(it.Detail, 1)
		it.TaskID = e.TaskID
	}
	return it
}

// fullItemOf is the event with its whole detail.
func fullItemOf(e store.Event) eventItem {
	it := eventItem{Seq: e.Seq, Type: e.Type, Time: e.Time, Class: "other", Title: e.Type}
	var p map[string]any
	_ = json.Unmarshal(e.Payload, &p) // a payload that is not an object shows as raw detail
	str := func(k string) string { s, _ := p[k].(string); return s }
	switch e.Type {
	case "message":
		it.Class, it.Title, it.Text = "message", "assistant", str("text")
		if str("role") == "user" {
			it.Class, it.Title = "message user", "message from "+str("requester")
		}
	case "tool_started":
		it.Class, it.Title, it.Detail = "tool", "▸ "+str("tool"), pretty(str("args"))
	case "tool_finished":
		it.Class, it.Title, it.Detail = "tool", "✓ "+str("tool")+" finished", str("result")
		if b, _ := p["is_error"].(bool); b {
			it.Class, it.Title = "tool error", "✗ "+str("tool")+" failed"
		}
	case "tool_refused":
		it.Class, it.Title, it.Code, it.Text = "refusal", "refused "+str("tool"), str("code"), str("reason")
	case "approval_requested":
		it.Class, it.Title, it.Detail = "approval", "approval requested: "+str("tool")+" "+str("subject"), str("preview")
	case "approval_decided":
		it.Class, it.Title = "approval", "approval "+str("decision")
		if by := str("approver"); by != "" {
			it.Title += " by " + by
		}
		it.Text = str("note")
	case "task_state":
		it.Class, it.Title = "state", "state → "+str("state")
		if why := str("reason"); why != "" {
			it.Title += " (" + why + ")"
		}
	case "plan_updated":
		it.Class, it.Title = "plan", "plan updated"
	case "final_report":
		it.Class, it.Title, it.Report = "report", "final report: "+str("state"), p
	case "usage":
		n, _ := p["prompt"].(float64)
		m, _ := p["completion"].(float64)
		it.Class, it.Title = "usage", fmt.Sprintf("%s: %s tokens", str("model"), compact(int(n+m)))
	default:
		if t := str("text"); t != "" {
			it.Text = t
		} else if len(e.Payload) > 2 {
			it.Detail = pretty(string(e.Payload))
		}
	}
	return it
}

func pretty(s string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(s), "", "  ") == nil {
		return buf.String()
	}
	return s
}

// planOf is the latest plan among evs, nil when there is none.
func planOf(evs []store.Event) []agent.TodoItem {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == "plan_updated" {
			var p struct {
				Plan []agent.TodoItem `json:"plan"`
			}
			if json.Unmarshal(evs[i].Payload, &p) == nil {
				return p.Plan
			}
		}
	}
	return nil
}

// deliverablesOf is what the task declared with present: the result's list
// once it ended, else the latest deliverables event; nil when none.
func deliverablesOf(t store.Task, evs []store.Event) []agent.Deliverable {
	if t.Result != nil && len(t.Result.Deliverables) > 0 {
		return t.Result.Deliverables
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == "deliverables" {
			var p struct {
				Deliverables []agent.Deliverable `json:"deliverables"`
			}
			if json.Unmarshal(evs[i].Payload, &p) == nil {
				return p.Deliverables
			}
		}
	}
	return nil
}

// stateOf reads the state a task_state event announces, in the API's
// reading of that payload.
func stateOf(e store.Event) string {
	var p apitype.TaskStatePayload
	_ = json.Unmarshal(e.Payload, &p) // no state to read: "" leaves the page as it is
	return strings.TrimSpace(string(p.State))
}
