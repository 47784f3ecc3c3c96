package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"reasonix/bot"
	"reasonix/runner"
)

// view is what the status message shows, folded from the task's events.
type view struct {
	taskID, prompt string
	requester      string // the task's principal id: mentioned where they should act
	state          runner.State
	plan           []todo
	fleet          []node
	// nested are the fleets sub-agents started, by the ref of the node
	// that started each; the tree draws them under that node.
	nested         map[string][]node
	step           string
	tokens         int64
	started, ended time.Time
	// held counts messages not posted because the task reached its cap.
	held int
	// link is the task's page under [serve] public_url, "" without one.
	link string
	// refusal is the last call the gate refused, for the report to name.
	refusal *refusal
	// subjects are the subjects of the calls started and asked about, by
	// call id and by tool, to name a refused call by what it would do.
	subjects map[string]string
}

// refusal is a tool_refused event's payload.
type refusal struct {
	Tool     string `json:"tool"`
	CallID   string `json:"call_id"`
	Code     string `json:"code"`
	Reason   string `json:"reason"`
	Subagent string `json:"subagent"`
	subject  string
}

type todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
	Steps   []todo `json:"steps"` // a phase's sub-steps (one level)
}

// todoMark is a plan item's status as the status message shows it.
func todoMark(status string) string {
	switch status {
	case "completed":
		return "✔"
	case "in_progress":
		return "▶"
	}
	return "○"
}

// node mirrors a fleet node of goals' fleet_updated payload (the relay may
// not import goals; the event's JSON is the contract).
type node struct {
	ID        string   `json:"id"`
	Ref       string   `json:"ref"`
	State     string   `json:"state"`
	DependsOn []string `json:"depends_on"`
	Reason    string   `json:"reason"`
	Summary   string   `json:"summary"`
}

// apply folds ev into the view; it reports whether the status changed.
func (v *view) apply(ev runner.Event) bool {
	switch ev.Type {
	case "task_state":
		var p struct {
			State runner.State `json:"state"`
		}
		if json.Unmarshal(ev.Payload, &p) != nil || p.State == "" {
			return false
		}
		if v.started.IsZero() {
			v.started = ev.Time
		}
		v.state = p.State
		if p.State.Terminal() {
			v.ended, v.step = ev.Time, ""
		} else {
			v.ended = time.Time{}
		}
	case "plan_updated":
		var p struct {
			Plan []todo `json:"plan"`
		}
		if json.Unmarshal(ev.Payload, &p) != nil {
			return false
		}
		v.plan = p.Plan
	case "fleet_updated":
		var p struct {
			Parent string `json:"parent"`
			Nodes  []node `json:"nodes"`
		}
		if json.Unmarshal(ev.Payload, &p) != nil {
			return false
		}
		if p.Parent != "" {
			if v.nested == nil {
				v.nested = map[string][]node{}
			}
			v.nested[p.Parent] = p.Nodes
			return true
		}
		v.fleet = p.Nodes
	case "tool_started":
		var p struct {
			Tool     string `json:"tool"`
			Args     string `json:"args"`
			Subagent string `json:"subagent"`
		}
		if json.Unmarshal(ev.Payload, &p) != nil {
			return false
		}
		var id struct {
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(ev.Payload, &id)
		v.remember("call:"+id.CallID, callSubject(p.Args))
		v.step = p.Tool + " " + callSubject(p.Args)
		if p.Subagent != "" {
			v.step = p.Subagent + ": " + v.step
		}
	case "subagent_finished":
		// A fleet's node: its end shows in the tree (summary included),
		// not as a message of its own (see watcher.post).
		var p struct {
			ID, Ref, State, Reason, Parent string
		}
		if json.Unmarshal(ev.Payload, &p) != nil {
			return false
		}
		if p.Parent != "" {
			for i, n := range v.nested[p.Parent] {
				if n.Ref == p.Ref && p.Ref != "" {
					v.nested[p.Parent][i].State = cmpStr(p.State, n.State)
					v.nested[p.Parent][i].Reason = cmpStr(p.Reason, n.Reason)
					return true
				}
			}
			return false
		}
		i := v.fleetNode(p.ID)
		if i < 0 {
			return false
		}
		v.fleet[i].State = cmpStr(p.State, v.fleet[i].State)
		v.fleet[i].Reason = cmpStr(p.Reason, v.fleet[i].Reason)
		return true
	case "tool_refused":
		var p refusal
		if json.Unmarshal(ev.Payload, &p) != nil || p.Tool == "" {
			return false
		}
		p.subject = cmpStr(v.subjects["call:"+p.CallID], v.subjects["tool:"+p.Tool])
		v.refusal = &p
		return false
	case "approval_requested":
		var p struct{ Tool, Subject string }
		if json.Unmarshal(ev.Payload, &p) == nil && p.Subject != "" {
			v.remember("tool:"+p.Tool, firstLine(p.Subject, 120))
		}
		return false
	case "usage":
		var p struct {
			Prompt, Completion int64
		}
		if json.Unmarshal(ev.Payload, &p) != nil {
			return false
		}
		v.tokens += p.Prompt + p.Completion
	default:
		return false
	}
	return true
}

func (v *view) remember(key, subject string) {
	if subject == "" {
		return
	}
	if v.subjects == nil || len(v.subjects) > 1000 { // bounded: a long task forgets old calls
		v.subjects = map[string]string{}
	}
	v.subjects[key] = subject
}

// refusalWords says why a task that ended on a refused call ended, in a
// sentence that names the call and what would let it run: the way a
// person moves on, never the name of an event.
func refusalWords(r *refusal) string {
	call := "The " + r.Tool + " call"
	if r.subject != "" {
		call += " “" + r.subject + "”"
	}
	if r.Subagent != "" {
		call += " of sub-agent " + r.Subagent
	}
	var s string
	switch r.Code {
	case "deny_rule":
		s = call + " was refused by a deny rule in [permissions]. An admin can narrow that rule; nothing else lets it run."
	case "declined":
		s = call + " was declined by an approver. Reply in this thread to continue the task another way."
	case "unattended":
		s = call + " needed a person's approval and nobody could be asked. An allow rule in [permissions], a grant for this task (" +
			"start it from chat, where an approver can answer), or a looser posture (auto, yolo) would let it run."
	case "expired":
		s = call + " waited for an approval nobody gave in time, so it was refused. Reply in this thread to continue and be asked again."
	default:
		s = call + " was refused. An allow rule in [permissions], a grant for this task or a looser posture would let it run."
	}
	if r.Reason != "" && r.Code != "declined" && r.Code != "expired" {
		s += " (" + firstLine(r.Reason, 200) + ")"
	}
	return s
}

// fleetNode is the index of node id in the fleet, -1 when it is none of
// its nodes.
func (v *view) fleetNode(id string) int {
	for i, n := range v.fleet {
		if n.ID == id && id != "" {
			return i
		}
	}
	return -1
}

// callSubject is the part of a call's arguments a person recognises.
func callSubject(args string) string {
	var a map[string]any
	if json.Unmarshal([]byte(args), &a) != nil {
		return ""
	}
	for _, k := range []string{"command", "path", "file_path", "pattern", "url", "query"} {
		if s, ok := a[k].(string); ok {
			return firstLine(s, 120)
		}
	}
	return ""
}

// render is the status message in f's markup.
func (v *view) render(f bot.Format, now time.Time) string {
	var b strings.Builder
	state := cmpStr(stateWords(v.state), "queued")
	fmt.Fprintf(&b, "%s %s %s\n", stateIcon(v.state), f.Bold(f.Escape("Task "+v.taskID)), f.Escape("— "+state))
	b.WriteString(f.Escape(firstLine(v.prompt, 200)) + "\n")
	if len(v.plan) > 0 {
		b.WriteString(f.Bold("Plan") + "\n")
		for _, it := range v.plan {
			b.WriteString(todoMark(it.Status) + " " + f.Escape(firstLine(it.Content, 160)) + "\n")
			for _, st := range it.Steps {
				b.WriteString("    " + todoMark(st.Status) + " " + f.Escape(firstLine(st.Content, 160)) + "\n")
			}
		}
	}
	if len(v.fleet) > 0 {
		b.WriteString(f.Bold("Fleet") + "\n")
		for _, line := range fleetTree(v.fleet, v.nested) {
			b.WriteString(f.Escape(line) + "\n")
		}
	}
	if v.step != "" && !v.state.Terminal() {
		b.WriteString(f.Escape("Now: "+v.step) + "\n")
	}
	end := now
	if !v.ended.IsZero() {
		end = v.ended
	}
	var facts []string
	if !v.started.IsZero() {
		facts = append(facts, "elapsed "+end.Sub(v.started).Round(time.Second).String())
	}
	if v.tokens > 0 {
		facts = append(facts, fmt.Sprintf("%d tokens", v.tokens))
	}
	if v.held > 0 {
		facts = append(facts, fmt.Sprintf("%d messages held back (the thread reached its cap)", v.held))
	}
	if len(facts) > 0 {
		b.WriteString(f.Escape(strings.Join(facts, " · ")) + "\n")
	}
	if v.link != "" {
		b.WriteString(f.Escape(v.link))
	}
	out := strings.TrimRight(b.String(), "\n")
	if parts := bot.Split(out, f.Limit()); len(parts) > 1 {
		out = parts[0] // the head: the state and plan matter most
	}
	return out
}

// fleetTree draws the fleet as an indented dependency tree: a node under
// the first node it depends on, and a fleet a node started (nested, by the
// node's ref) under that node, marked ↳.
func fleetTree(nodes []node, nested map[string][]node) []string {
	return fleetLines(nodes, nested, "", 0)
}

func fleetLines(nodes []node, nested map[string][]node, indent string, level int) []string {
	byID := map[string]bool{}
	for _, n := range nodes {
		byID[n.ID] = true
	}
	children := map[string][]node{}
	var roots []node
	for _, n := range nodes {
		parent := ""
		for _, d := range n.DependsOn {
			if byID[d] && d != n.ID {
				parent = d
				break
			}
		}
		if parent == "" {
			roots = append(roots, n)
		} else {
			children[parent] = append(children[parent], n)
		}
	}
	var lines []string
	seen := map[string]bool{}
	var walk func(n node, depth int)
	walk = func(n node, depth int) {
		if seen[n.ID] || depth > 20 {
			return
		}
		seen[n.ID] = true
		mark := map[string]string{"done": "✔", "running": "▶", "failed": "✖", "skipped": "⤼"}[n.State]
		line := indent + strings.Repeat("  ", depth) + map[bool]string{true: "↳ "}[level > 0] + cmpStr(mark, "○") + " " + n.ID + " (" + n.State
		if n.Reason != "" {
			line += ": " + n.Reason
		}
		line += ")"
		if n.Summary != "" && n.State != "running" && n.State != "pending" {
			line += " — " + firstLine(n.Summary, 100)
		}
		lines = append(lines, line)
		if sub := nested[n.Ref]; len(sub) > 0 && n.Ref != "" && level < 8 {
			lines = append(lines, fleetLines(sub, nested, indent+strings.Repeat("  ", depth+1), level+1)...)
		}
		for _, c := range children[n.ID] {
			walk(c, depth+1)
		}
	}
	for _, n := range roots {
		walk(n, 0)
	}
	for _, n := range nodes { // a cycle leaves nodes unreached: list them flat
		walk(n, 0)
	}
	return lines
}
