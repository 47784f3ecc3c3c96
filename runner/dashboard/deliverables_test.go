package dashboard_test

import (
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner/store"
)

// The task page shows the declared deliverables and a two-level plan,
// escaped.
func TestTaskPageShowsDeliverablesAndPhases(t *testing.T) {
	e := newEnv(t, bashThenDone())
	taskID, _ := e.parked("token:alice", "write the report")
	for typ, payload := range map[string]string{
		"plan_updated": `{"plan":[{"content":"phase one","status":"in_progress","steps":[{"content":"sub <b>step</b>","status":"completed"},{"content":"second sub-step","status":"in_progress"}]}]}`,
		"deliverables": `{"deliverables":[{"path":"out/report.md","description":"the <i>findings</i>","bytes":42}]}`,
	} {
		if _, err := e.st.AppendEvent(t.Context(), taskID, typ, []byte(payload)); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	b.signIn(e.token("erin", store.RoleAdmin))
	p := b.get("/tasks/" + taskID)
	for _, want := range []string{
		`<h2 id="deliv-h">Deliverables</h2>`, `<code>out/report.md</code>`, `42 bytes`, `the &lt;i&gt;findings&lt;/i&gt;`,
		`<ol class="plan steps">`, `sub &lt;b&gt;step&lt;/b&gt;`, `second sub-step`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the task page lacks %q", want)
		}
	}
}

// The task page of a finished task lists its ten delegation counters, a
// plain task's included (zeros when no sub-agent ran).
func TestTaskPageShowsDelegationCounters(t *testing.T) {
	e := newEnv(t, agenttest.NewScriptedProvider(agenttest.Turn{Text: "done"}))
	task := e.finished("say done")
	b := e.browser()
	b.signIn(e.token("erin", store.RoleAdmin))
	p := b.get("/tasks/" + task.ID)
	for _, want := range []string{`<h2 id="deleg-h">Delegation</h2>`, `<code>subagent_runs</code></th><td>0</td>`,
		`<code>false_completions</code>`, `<code>write_scope_violations</code>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the task page lacks %q", want)
		}
	}
}
