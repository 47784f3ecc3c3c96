package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// subRouter answers each conversation from the script whose key occurs in
// its first user message: a goal's first turn carries "Objective: …", a
// sub-agent's its own prompt, so parents and children running at once do
// not consume each other's turns.
type subRouter struct {
	mu      sync.Mutex
	keys    []string
	scripts map[string]*agenttest.ScriptedProvider
}

func newSubRouter() *subRouter {
	return &subRouter{scripts: map[string]*agenttest.ScriptedProvider{}}
}

func (r *subRouter) script(key string, turns ...agenttest.Turn) *agenttest.ScriptedProvider {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := agenttest.NewScriptedProvider(turns...)
	r.keys = append(r.keys, key)
	r.scripts[key] = p
	return p
}

func (r *subRouter) Name() string { return "subrouter" }

func (r *subRouter) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	for _, m := range req.Messages {
		if m.Role != agent.RoleUser {
			continue
		}
		r.mu.Lock()
		var p *agenttest.ScriptedProvider
		for _, k := range r.keys {
			if strings.Contains(m.Content, k) {
				p = r.scripts[k]
				break
			}
		}
		r.mu.Unlock()
		if p == nil {
			return nil, context.Canceled
		}
		return p.Stream(ctx, req)
	}
	return nil, context.Canceled
}

// goalRevision reads the revision from the last get_goal result of req.
func goalRevision(req agenttest.Request) (id string, rev int) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != agent.RoleTool || !strings.Contains(m.Content, `"revision"`) {
			continue
		}
		var v struct {
			Goal struct {
				Goal     struct{ ID string } `json:"goal"`
				Revision int                 `json:"revision"`
			} `json:"goal"`
		}
		if json.Unmarshal([]byte(m.Content), &v) == nil {
			return v.Goal.Goal.ID, v.Goal.Revision
		}
	}
	return "", -1
}

// endGoal is the three model turns that end a goal the way a model does:
// read the goal, report through update_goal (action with fields), answer.
// check, when set, inspects the first request.
func endGoal(action string, fields map[string]any, final string, check func(agenttest.Request)) []agenttest.Turn {
	return []agenttest.Turn{
		agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
			if check != nil {
				check(req)
			}
			return calls(call("gg", "get_goal", map[string]any{}))
		}),
		agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
			id, rev := goalRevision(req)
			args := map[string]any{"goal_id": id, "revision": rev, "action": action}
			for k, v := range fields {
				args[k] = v
			}
			return calls(call("ug", "update_goal", args))
		}),
		answer(final),
	}
}

func lastUserMessage(req agenttest.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == agent.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

func payload(t *testing.T, e store.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Payload, &m); err != nil {
		t.Fatalf("event %s payload %s: %v", e.Type, e.Payload, err)
	}
	return m
}

// finalReport is the task's final_report payload.
func finalReport(t *testing.T, svc *runner.Service, id string) map[string]any {
	t.Helper()
	evs := runnertest.Events(t, svc, id, "final_report")
	if len(evs) == 0 {
		t.Fatal("no final_report")
	}
	return payload(t, evs[len(evs)-1])
}

// goalDoc reads what the runner saved as the task's goal state.
func goalDoc(t *testing.T, st *store.Store, id string) (state map[string]any, children []map[string]any) {
	t.Helper()
	raw, err := st.GoalState(context.Background(), id)
	if err != nil || raw == nil {
		t.Fatalf("goal state of %s: %s, %v", id, raw, err)
	}
	var doc struct {
		State    map[string]any   `json:"state"`
		Children []map[string]any `json:"children"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.State, doc.Children
}

func submitGoal(t *testing.T, svc *runner.Service, req runner.TaskRequest) store.Task {
	t.Helper()
	if req.Source == "" {
		req.Source = store.SourceAPI
	}
	if req.Requester == "" {
		req.Requester = "api:alice"
	}
	task, _, err := svc.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// TestGoalCompletes: a goal task works, delegates one sub-agent, completes
// through update_goal and ends succeeded with the goal's summary, the
// delegation counters in its final report, and the goal events in its log.
func TestGoalCompletes(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	parent := rt.script("Objective: write notes",
		append([]agenttest.Turn{
			calls(call("w1", "write_file", map[string]string{"path": "notes.txt", "content": "notes\n"})),
			calls(call("t1", "task", map[string]string{"prompt": "child: count the notes"})),
		}, endGoal("complete", map[string]any{"summary": "Wrote notes.txt and had it counted."}, "All done.", nil)...)...)
	child := rt.script("child: count the notes", answer("one note"))
	st := storetest.SQLite(t, store.Config{})
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: rt, Configure: func(c *runner.Config) { scratch = c.ScratchDir }})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "write notes", Goal: true, Posture: "auto"})

	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded || done.Result.Summary != "Wrote notes.txt and had it counted." || done.Result.FinalAnswer != "All done." {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	if b, err := os.ReadFile(filepath.Join(scratch, task.ID, "notes.txt")); err != nil || string(b) != "notes\n" {
		t.Fatalf("notes.txt = %q, %v", b, err)
	}
	rep := finalReport(t, svc, task.ID)
	counters, _ := rep["counters"].(map[string]any)
	goal, _ := rep["goal"].(map[string]any)
	if counters["subagent_runs"] != float64(1) || goal["status"] != "complete" || goal["id"] != task.ID {
		t.Fatalf("final report = %v", rep)
	}
	// The child's tokens count for the task: two parent answers and the child's.
	if done.Result.Tokens.Prompt != 200 {
		t.Fatalf("tokens = %+v", done.Result.Tokens)
	}
	ups := runnertest.Events(t, svc, task.ID, "goal_updated")
	if len(ups) == 0 || payload(t, ups[len(ups)-1])["status"] != "complete" || payload(t, ups[0])["goal_id"] != task.ID {
		t.Fatalf("goal_updated events = %d", len(ups))
	}
	if len(runnertest.Events(t, svc, task.ID, "subagent_started")) != 1 || len(runnertest.Events(t, svc, task.ID, "subagent_finished")) != 1 {
		t.Fatal("sub-agent events missing")
	}
	// The child's conversation stays out of the task's transcript.
	for _, e := range runnertest.Events(t, svc, task.ID, "message") {
		if payload(t, e)["text"] == "one note" {
			t.Fatal("the child's answer was logged as the task's message")
		}
	}
	if parent.Remaining() != 0 || child.Remaining() != 0 {
		t.Fatalf("turns left: parent %d child %d", parent.Remaining(), child.Remaining())
	}
	state, children := goalDoc(t, st, task.ID)
	if state["status"] != "complete" || len(children) != 1 {
		t.Fatalf("saved goal: status %v, %d children", state["status"], len(children))
	}
}

// TestGoalQuestionAnsweredByMessage: a goal blocked with a question ends
// the task blocked with a question event; the requester's message resumes
// the same goal, which receives the answer and completes.
func TestGoalQuestionAnsweredByMessage(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	var sawAnswer bool
	p := rt.script("Objective: pick a database",
		endGoal("blocked", map[string]any{"reason": "no database chosen", "question": "Which database should I use?"}, "Blocked.", nil)...)
	svc := runnertest.Start(t, runnertest.Options{Provider: rt})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "pick a database", Goal: true, Posture: "auto"})

	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBlocked, store.StateSucceeded, store.StateFailed)
	if done.State != store.StateBlocked || done.Result.Error != "question" || !contains(done.Result.Summary, "Which database") ||
		!contains(done.Result.Reason, "the goal asks: Which database") {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	qs := runnertest.Events(t, svc, task.ID, "question")
	if len(qs) != 1 || payload(t, qs[0])["question"] != "Which database should I use?" {
		t.Fatalf("question events = %v", qs)
	}

	p.Add(endGoal("complete", map[string]any{"summary": "Chose SQLite."}, "Using SQLite.", func(req agenttest.Request) {
		sawAnswer = contains(lastUserMessage(req), "Message from the requester:\nUse SQLite.")
	})...)
	if _, err := svc.Message(context.Background(), task.ID, runner.Principal{ID: "api:alice"}, "Use SQLite."); err != nil {
		t.Fatal(err)
	}
	done = runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed)
	if done.State != store.StateSucceeded || !sawAnswer {
		t.Fatalf("after the answer: %s %+v, answer seen %v", done.State, done.Result, sawAnswer)
	}
	goal, _ := finalReport(t, svc, task.ID)["goal"].(map[string]any)
	if goal["id"] != task.ID || goal["turns"] != float64(2) {
		t.Fatalf("goal = %v", goal)
	}
}

// planTurns is a planning pass: a plan written with todo_write, then the
// model's account of it.
func planTurns(items ...string) []agenttest.Turn {
	todos := make([]map[string]string, 0, len(items))
	for _, it := range items {
		todos = append(todos, map[string]string{"content": it, "status": "pending"})
	}
	return []agenttest.Turn{
		calls(call("p1", "todo_write", map[string]any{"todos": todos})),
		answer("Plan: " + strings.Join(items, "; ")),
	}
}

// TestGoalPlanFirstApproved: a plan_first task plans read-only, submits the
// plan as an approval of tool "plan" and waits without holding the only
// worker; allowed, it carries the plan out under the approved-plan window
// (an ordinary write needs no further approval) and succeeds.
func TestGoalPlanFirstApproved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newSubRouter()
	p := rt.script("Objective: make plan.txt", planTurns("write plan.txt")...)
	rt.script("say hello", answer("hello"))
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: settings(1),
		Configure: func(c *runner.Config) { scratch = c.ScratchDir }})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "make plan.txt", PlanFirst: true, Posture: "ask"})

	ap := waitPending(t, svc, task.ID)
	if ap.Tool != "plan" || !contains(ap.Preview, "1. write plan.txt") || !contains(ap.Preview, "Plan: write plan.txt") {
		t.Fatalf("approval = %+v", ap)
	}
	pa := runnertest.Events(t, svc, task.ID, "plan_approval")
	if len(pa) != 1 || !contains(string(pa[0].Payload), `"write plan.txt"`) {
		t.Fatalf("plan_approval events = %v", pa)
	}
	// The waiting task holds no worker.
	other := submitGoal(t, svc, runner.TaskRequest{Prompt: "say hello", Posture: "auto"})
	runnertest.WaitState(t, svc, other.ID, 0, store.StateSucceeded)

	p.Add(calls(call("w1", "write_file", map[string]string{"path": "plan.txt", "content": "ok\n"})),
		calls(call("p2", "todo_write", map[string]any{"todos": []map[string]string{{"content": "write plan.txt", "status": "completed"}}})))
	p.Add(endGoal("complete", map[string]any{"summary": "plan.txt written."}, "Done.", nil)...)
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "bob", CallHash: ap.CallHash, Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	if b, err := os.ReadFile(filepath.Join(scratch, task.ID, "plan.txt")); err != nil || string(b) != "ok\n" {
		t.Fatalf("plan.txt = %q, %v", b, err)
	}
	if all, _ := svc.Approvals(ctx, runner.ApprovalFilter{TaskID: task.ID}); len(all) != 1 {
		t.Fatalf("%d approvals, want only the plan's", len(all))
	}
	if p.Remaining() != 0 {
		t.Fatalf("%d turns left", p.Remaining())
	}
}

// TestGoalPlanRejectedReplans: a denied plan goes back to the model with
// the approver's note, and the revised plan is a new approval.
func TestGoalPlanRejectedReplans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newSubRouter()
	p := rt.script("Objective: fix the build", planTurns("patch main.go")...)
	svc := runnertest.Start(t, runnertest.Options{Provider: rt})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "fix the build", PlanFirst: true, Posture: "ask"})
	first := waitPending(t, svc, task.ID)

	var sawNote bool
	revised := planTurns("patch main.go", "update the README")
	p.Add(agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
		sawNote = contains(lastUserMessage(req), "also update the README")
		return revised[0]
	}), revised[1])
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: first.ID, Decision: "deny", Approver: "bob", Note: "also update the README", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	var second []store.Approval
	eventually.True(t, 0, func() bool {
		second, _ = svc.Approvals(ctx, runner.ApprovalFilter{TaskID: task.ID, State: store.ApprovalPending})
		return len(second) == 1
	}, "no revised plan approval after the denial")
	if len(second) != 1 || second[0].ID == first.ID || !contains(second[0].Preview, "2. update the README") || second[0].CallHash == first.CallHash {
		t.Fatalf("revised plan approval = %+v", second)
	}
	if !sawNote {
		t.Fatal("the approver's note did not reach the model")
	}
	runnertest.WaitState(t, svc, task.ID, 0, store.StateWaitingApproval)
	if _, err := svc.Cancel(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
}

// TestGoalPlanUnattended: nobody can approve a webhook task's plan, so the
// task ends blocked with code unattended instead of waiting or re-planning.
func TestGoalPlanUnattended(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	p := rt.script("Objective: nightly cleanup", planTurns("delete stale branches")...)
	svc := runnertest.Start(t, runnertest.Options{Provider: rt})
	task := submitGoal(t, svc, runner.TaskRequest{Source: store.SourceWebhook, Requester: "webhook:ci", Prompt: "nightly cleanup", PlanFirst: true})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBlocked, store.StateFailed, store.StateWaitingApproval, store.StateSucceeded)
	if done.State != store.StateBlocked || done.Result.Error != "unattended" || !contains(done.Result.Summary, "nobody can approve the plan") ||
		done.Result.Reason == "" {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	if all, _ := svc.Approvals(context.Background(), runner.ApprovalFilter{TaskID: task.ID}); len(all) != 0 || p.Remaining() != 0 {
		t.Fatalf("approvals %d, turns left %d", len(all), p.Remaining())
	}
}

// TestGoalSuspendedCallResumes: a goal's writer call that needs approval
// parks the task; after the decision the goal continues exactly there:
// the call runs once and the goal completes.
func TestGoalSuspendedCallResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newSubRouter()
	p := rt.script("Objective: make out.txt", calls(bashCall("c1", "echo hi > out.txt")))
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Configure: func(c *runner.Config) { scratch = c.ScratchDir }})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "make out.txt", Goal: true, Posture: "ask"})
	ap := waitPending(t, svc, task.ID)
	if ap.Tool != "bash" {
		t.Fatalf("approval = %+v", ap)
	}
	var ranFirst bool
	p.Add(endGoal("complete", map[string]any{"summary": "out.txt made."}, "Done.", func(req agenttest.Request) {
		// The continued turn goes straight on with the approved call's result.
		last := req.Messages[len(req.Messages)-1]
		ranFirst = last.Role == agent.RoleTool && last.ToolCallID == "c1"
	})...)
	if _, err := svc.Decide(ctx, runner.Decision{ApprovalID: ap.ID, Decision: "allow_once", Approver: "bob", Role: store.RoleApprove}); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || !ranFirst {
		t.Fatalf("task = %s %+v, call result first %v", done.State, done.Result, ranFirst)
	}
	if b, err := os.ReadFile(filepath.Join(scratch, task.ID, "out.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("out.txt = %q, %v", b, err)
	}
	n := 0
	for _, e := range runnertest.Events(t, svc, task.ID, "tool_started") {
		if payload(t, e)["tool"] == "bash" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the approved call started %d times", n)
	}
}

var refOfA = regexp.MustCompile(`## a: done ref=(sa-[0-9a-f]+)`)

// TestGoalFleetSurvivesRestart: a two-node fleet runs its children in
// dependency order and their records are saved with the task; after the
// service restarts, the resumed goal reads the earlier child's answer.
func TestGoalFleetSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newSubRouter()
	fleet := map[string]any{"items": []map[string]any{
		{"id": "a", "prompt": "child A: survey the files"},
		{"id": "b", "prompt": "child B: summarize the survey", "depends_on": []string{"a"}},
	}}
	p := rt.script("Objective: survey and summarize",
		append([]agenttest.Turn{calls(call("f1", "fleet", fleet))},
			endGoal("blocked", map[string]any{"reason": "needs a decision", "question": "Merge the summary?"}, "Waiting.", nil)...)...)
	rt.script("child A: survey the files", answer("A found 3 files"))
	var bSawA bool
	rt.script("child B: summarize the survey", agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
		bSawA = contains(req.Messages[0].Content+lastUserMessage(req), "A found 3 files")
		return answer("B summarized")
	}))
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: rt})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "survey and summarize", Goal: true, Posture: "auto"})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBlocked, store.StateFailed, store.StateSucceeded)
	if done.State != store.StateBlocked || !bSawA {
		t.Fatalf("task = %s %+v, B saw A's answer %v", done.State, done.Result, bSawA)
	}
	if _, children := goalDoc(t, st, task.ID); len(children) != 2 || children[0]["id"] != "a" || children[0]["answer"] != "A found 3 files" {
		t.Fatalf("saved children = %v", children)
	}
	if n := len(runnertest.Events(t, svc, task.ID, "fleet_updated")); n < 3 {
		t.Fatalf("%d fleet_updated events", n)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := svc.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}

	// A fresh service on the same store: the goal resumes with the answer
	// and reads child A's answer by the ref the fleet reported.
	var readResult string
	p.Add(agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
		for _, m := range req.Messages {
			if m := refOfA.FindStringSubmatch(m.Content); m != nil {
				return calls(call("r1", "read_subagent_result", map[string]string{"ref": m[1]}))
			}
		}
		return answer("no ref found")
	}))
	p.Add(endGoal("complete", map[string]any{"summary": "Merged."}, "Merged.", func(req agenttest.Request) {
		readResult = req.Messages[len(req.Messages)-1].Content
	})...)
	svc2 := runnertest.Start(t, runnertest.Options{Store: st, Provider: rt})
	if _, err := svc2.Message(ctx, task.ID, runner.Principal{ID: "api:alice"}, "Yes, merge it."); err != nil {
		t.Fatal(err)
	}
	done = runnertest.WaitState(t, svc2, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || !contains(readResult, "A found 3 files") {
		t.Fatalf("after restart: %s %+v; read_subagent_result gave %q", done.State, done.Result, readResult)
	}
	counters, _ := finalReport(t, svc2, task.ID)["counters"].(map[string]any)
	if counters["subagent_runs"] != float64(2) {
		t.Fatalf("counters = %v", counters)
	}
}

// TestGoalStopAndResume: Stop hands a running goal over; a new service
// continues the same goal state (same goal id, turns accumulate) without a
// resume.
func TestGoalStopAndResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newSubRouter()
	p := rt.script("Objective: long job",
		calls(call("w1", "write_file", map[string]string{"path": "step1.txt", "content": "1\n"})),
		agenttest.Delayed(time.Minute, answer("never")))
	st := storetest.SQLite(t, store.Config{})
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: rt})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "long job", Goal: true, Posture: "auto"})
	// Stop while the second turn's request is in flight: the first turn
	// (the write) has been saved, the second never answers.
	eventually.True(t, 0, func() bool { return len(p.Requests()) >= 2 }, "the goal never made its second request")
	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := svc.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	if tk, _ := st.Task(ctx, task.ID); tk.State != store.StateQueued {
		t.Fatalf("after Stop: %s", tk.State)
	}
	state, _ := goalDoc(t, st, task.ID)
	if state["status"] != "cancelled" || state["turns"] != float64(1) {
		t.Fatalf("saved goal after Stop: status %v turns %v", state["status"], state["turns"])
	}

	var continued string
	p.Add(endGoal("complete", map[string]any{"summary": "Finished the long job."}, "Done.", func(req agenttest.Request) {
		continued = lastUserMessage(req)
	})...)
	svc2 := runnertest.Start(t, runnertest.Options{Store: st, Provider: rt})
	done := runnertest.WaitState(t, svc2, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	if !contains(continued, `<goal id="`+task.ID+`"`) || !contains(continued, "Continue working toward the goal") {
		t.Fatalf("the resumed turn did not continue the goal: %q", continued)
	}
	goal, _ := finalReport(t, svc2, task.ID)["goal"].(map[string]any)
	if goal["id"] != task.ID || goal["turns"] != float64(2) {
		t.Fatalf("goal = %v", goal)
	}
}

// TestGoalBudgetResumes: a goal that spends its turn budget ends
// budget_exhausted; Resume grants a fresh slice and the same goal completes.
func TestGoalBudgetResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newSubRouter()
	p := rt.script("Objective: two steps",
		calls(call("w1", "write_file", map[string]string{"path": "one.txt", "content": "1\n"})),
		answer("Step one is done."))
	set := settings(2)
	set.Agent.GoalMaxTurns = 1
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "two steps", Goal: true, Posture: "auto"})
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateBudgetExhausted, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "goal_budget" || !contains(done.Result.Summary, "turn budget spent") {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	p.Add(endGoal("complete", map[string]any{"summary": "Both steps done."}, "Done.", nil)...)
	if _, err := svc.Resume(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	done = runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded {
		t.Fatalf("after Resume: %s %+v", done.State, done.Result)
	}
	goal, _ := finalReport(t, svc, task.ID)["goal"].(map[string]any)
	if goal["id"] != task.ID || goal["turns"] != float64(2) {
		t.Fatalf("goal = %v", goal)
	}
	// A finished goal does not resume.
	if _, err := svc.Resume(ctx, task.ID); err == nil {
		t.Fatal("a succeeded task resumed")
	}
}

// TestGoalPromptBound: a goal's prompt becomes its objective, whose bound
// Submit enforces, so the task is refused at intake instead of failing later.
func TestGoalPromptBound(t *testing.T) {
	t.Parallel()
	svc := runnertest.Start(t, runnertest.Options{})
	long := strings.Repeat("x", 16<<10+1)
	if _, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: long, Goal: true}); !errors.Is(err, runner.ErrInvalid) {
		t.Fatalf("Submit of a long goal = %v, want ErrInvalid", err)
	}
	if _, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Prompt: long}); err != nil {
		t.Fatalf("a plain task of the same length: %v", err)
	}
}

// TestGoalSteeredMidTurn: a message sent while a goal's turn is running
// joins that turn before its next model request, as it does for plain runs.
func TestGoalSteeredMidTurn(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	started := make(chan struct{})
	var steered bool
	rt.script("Objective: tidy the docs",
		append([]agenttest.Turn{
			agenttest.Respond(func(agenttest.Request) agenttest.Turn {
				close(started)
				return calls(call("s", "bash", map[string]any{"command": "sleep 1"}))
			}),
		}, endGoal("complete", map[string]any{"summary": "Tidied, changelog too."}, "Done.", func(req agenttest.Request) {
			steered = lastUserMessage(req) == "Also update the changelog."
		})...)...)
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Configure: func(c *runner.Config) {
		c.ControlInterval = 20 * time.Millisecond
	}})
	task := submitGoal(t, svc, runner.TaskRequest{Prompt: "tidy the docs", Goal: true, Posture: "auto"})
	<-started
	runnertest.WaitState(t, svc, task.ID, 0, store.StateRunning)
	if _, err := svc.Message(context.Background(), task.ID, runner.Principal{ID: "api:alice"}, "Also update the changelog."); err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || !steered {
		t.Fatalf("task %s %+v; the message joined the running turn: %v", done.State, done.Result, steered)
	}
	goal, _ := finalReport(t, svc, task.ID)["goal"].(map[string]any)
	if goal["turns"] != float64(1) {
		t.Errorf("the message took a turn of its own: %v", goal)
	}
}

// TestGoalHasNoWallClock: [runner] task_timeout cuts a plain task's run,
// while a goal task started before it is still running after that time and
// completes: a goal has no default wall clock (its turn and cost budgets
// bound it).
func TestGoalHasNoWallClock(t *testing.T) {
	t.Parallel()
	rt := newSubRouter()
	started, plainCut := make(chan struct{}), make(chan struct{})
	turns := endGoal("complete", map[string]any{"summary": "outlived the timeout"}, "Done.", nil)
	first := turns[0]
	turns[0] = agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
		close(started)
		<-plainCut // until the plain task's timeout has passed
		return first.Handler(req)
	})
	rt.script("Objective: outlive the timeout", turns...)
	rt.script("hang until cut", agenttest.Turn{Stall: true})
	set := config.Default()
	set.Runner.TaskTimeout = 2 * time.Second
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Settings: set})
	goal := submitGoal(t, svc, runner.TaskRequest{Prompt: "outlive the timeout", Goal: true, Posture: "auto"})
	<-started
	plain := submitGoal(t, svc, runner.TaskRequest{Prompt: "hang until cut", Posture: "auto"})
	cut := runnertest.WaitState(t, svc, plain.ID, 0, store.StateBudgetExhausted, store.StateSucceeded, store.StateFailed)
	close(plainCut)
	if cut.State != store.StateBudgetExhausted || cut.Result.Error != "timeout" {
		t.Fatalf("plain task = %s %+v, want cut by task_timeout", cut.State, cut.Result)
	}
	done := runnertest.WaitState(t, svc, goal.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded {
		t.Fatalf("goal task = %s %+v, want it to outlive task_timeout", done.State, done.Result)
	}
}
