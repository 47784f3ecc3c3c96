package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"reasonix/bot/bottest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// Allow always from chat goes through the runner's one door: the
// requester is refused, an approver without the grant role is refused,
// and a task with nothing to grant for (a scratch task) offers no Allow
// always button and says so when asked in words; the approval stays
// pending through every refusal and is then decided as usual.
func TestAllowAlwaysFromChatIsCheckedByTheRunner(t *testing.T) {
	r := newRig(t, approvalScript)
	ctx := context.Background()
	m := r.slack.Mention(alice, channel, "", "allow me always")
	ap := r.approvalMessage(t, m.TS)
	id := r.taskOf(t, m.TS)
	for _, b := range ap.Buttons {
		if b.Label == "Allow always" {
			t.Errorf("a scratch task's approval offers Allow always: %+v", ap.Buttons)
		}
	}
	pending, err := r.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: id, State: store.ApprovalPending})
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	aid := pending[0].ID
	dmAnswer := func(user, ch, text string) string {
		t.Helper()
		ev := r.slack.DM(user, ch, text)
		var answer string
		eventually(t, "the answer to "+text, func() bool {
			msgs := r.slack.Thread(ch, ev.TS)
			if len(msgs) == 0 {
				return false
			}
			answer = msgs[len(msgs)-1].Text
			return true
		})
		return answer
	}
	if got := dmAnswer(alice, "DALI", "approve "+aid+" always"); !strings.Contains(got, "You asked for this task") {
		t.Errorf("the requester's allow always was answered %q", got)
	}
	if got := dmAnswer(bob, "DBOB", "approve "+aid+" always"); !strings.Contains(got, "grant or admin role") {
		t.Errorf("an approver's allow always was answered %q", got)
	}
	if _, err := r.st.GrantRole(ctx, "slack:"+bottest.SlackTeam+"/"+bob, store.RoleGrant); err != nil {
		t.Fatal(err)
	}
	if got := dmAnswer(bob, "DBOB", "approve "+aid+" always"); !strings.Contains(got, "no workspace, schedule or webhook") {
		t.Errorf("allow always of a scratch task was answered %q", got)
	}
	if pend, _ := r.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: id, State: store.ApprovalPending}); len(pend) != 1 {
		t.Fatalf("refused decisions changed the approval: %+v", pend)
	}
	if grants, _ := r.svc.Grants(ctx, runner.GrantFilter{All: true}); len(grants) != 0 {
		t.Fatalf("refused decisions made grants: %+v", grants)
	}
	if got := dmAnswer(bob, "DBOB", "approve "+aid); !strings.Contains(got, "Allowed once") {
		t.Fatalf("bob's allow once was answered %q", got)
	}
	done := runnertest.WaitState(t, r.svc, id, time.Minute, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
}

// A schedule's approval in its notify channel offers Allow always; an
// approver without the grant role who clicks it is refused (to them
// alone), one with it decides: the message says so, a standing grant for
// the schedule exists, and the schedule's next run is not asked.
func TestAllowAlwaysButtonForASchedule(t *testing.T) {
	r := newRig(t, approvalScript)
	ctx := context.Background()
	submit := func(prompt string) store.Task {
		task, _, err := r.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceCron, Requester: "schedule:nightly", Prompt: prompt,
			Notify: []store.NotifyTarget{{Transport: "slack", Channel: channel}}})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	task := submit("nightly check")
	var ap bottest.SlackMessage
	eventually(t, "the approval in the channel", func() bool {
		for _, m := range r.slack.Messages() {
			if m.Channel == channel && len(m.Buttons) > 0 {
				ap = m
				return true
			}
		}
		return false
	})
	always := ""
	for _, b := range ap.Buttons {
		if b.Label == "Allow always" {
			always = b.Value
		}
	}
	if always == "" {
		t.Fatalf("no Allow always button: %+v", ap.Buttons)
	}
	r.slack.Click(bob, channel, ap.TS, always)
	eventually(t, "the refusal", func() bool { return len(r.ephemeralFor(bob)) == 1 })
	if got := r.ephemeralFor(bob)[0]; !strings.Contains(got, "grant or admin role") {
		t.Errorf("bob without the grant role was answered %q", got)
	}
	if _, err := r.st.GrantRole(ctx, "slack:"+bottest.SlackTeam+"/"+bob, store.RoleGrant); err != nil {
		t.Fatal(err)
	}
	r.slack.Click(bob, channel, ap.TS, always)
	if got := runnertest.WaitState(t, r.svc, task.ID, time.Minute, store.StateSucceeded, store.StateBlocked, store.StateFailed); got.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", got.State, got.Result)
	}
	eventually(t, "the decided message", func() bool {
		for _, m := range r.slack.Messages() {
			if m.TS == ap.TS && strings.Contains(m.Text, "Allowed always") {
				return true
			}
		}
		return false
	})
	grants, err := r.svc.Grants(ctx, runner.GrantFilter{})
	if err != nil || len(grants) != 1 || grants[0].For != store.GrantForSchedule || grants[0].Name != "nightly" ||
		grants[0].GrantedBy != "slack:"+bottest.SlackTeam+"/"+bob {
		t.Fatalf("grants = %+v, %v", grants, err)
	}
	next := submit("nightly check again")
	if got := runnertest.WaitState(t, r.svc, next.ID, time.Minute, store.StateSucceeded, store.StateBlocked, store.StateFailed); got.State != store.StateSucceeded {
		t.Fatalf("next night = %s %+v", got.State, got.Result)
	}
	if n := len(runnertest.Events(t, r.svc, next.ID, "approval_requested")); n != 0 {
		t.Errorf("the next night was asked %d times", n)
	}
	if n := len(runnertest.Events(t, r.svc, next.ID, "grant_used")); n != 1 {
		t.Errorf("the next night recorded %d grant uses, want 1", n)
	}
}
