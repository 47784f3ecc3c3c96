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
	if got := dmAnswer(alice, "DALI", "approve "+aid+" always"); !strings.Contains(got, "requested this task") {
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
	done := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
}
