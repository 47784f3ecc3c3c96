package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"reasonix/bot/bottest"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// A chat identity granted the approve role decides like a configured
// approver; before the grant (and after a revoke) its click is refused.
func TestApproverFromRole(t *testing.T) {
	r := newRig(t, approvalScript)
	ctx := context.Background()
	m := r.slack.Mention(alice, channel, "", "needs a role approver")
	ap := r.approvalMessage(t, m.TS)
	id := r.taskOf(t, m.TS)
	malloryID := "slack:" + bottest.SlackTeam + "/" + mallory

	r.slack.Click(mallory, channel, ap.TS, ap.Buttons[0].Value)
	eventually(t, "the refusal", func() bool { return len(r.ephemeralFor(mallory)) == 1 })
	if got := r.ephemeralFor(mallory)[0]; !strings.Contains(got, "Only approvers") {
		t.Fatalf("answer before the grant = %q", got)
	}
	if _, err := r.st.GrantRole(ctx, malloryID, store.RoleSubmit); err != nil {
		t.Fatal(err)
	}
	r.slack.Click(mallory, channel, ap.TS, ap.Buttons[0].Value)
	eventually(t, "the second refusal", func() bool { return len(r.ephemeralFor(mallory)) == 2 })
	if _, err := r.st.GrantRole(ctx, malloryID, store.RoleApprove); err != nil {
		t.Fatal(err)
	}
	r.slack.Click(mallory, channel, ap.TS, ap.Buttons[0].Value)
	done := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	decided := runnertest.Events(t, r.svc, id, "approval_decided")
	if len(decided) != 1 || !strings.Contains(string(decided[0].Payload), malloryID) {
		t.Fatalf("decisions = %+v", decided)
	}
	if n := len(r.ephemeralFor(mallory)); n != 2 {
		t.Errorf("the accepted click was answered too (%d answers)", n)
	}
}

// An approver who holds the role only through `reasonix roles grant` is
// asked like a configured one: named in the request, so the platform
// tells them.
func TestRoleApproverIsAsked(t *testing.T) {
	r := newRig(t, approvalScript)
	if _, err := r.st.GrantRole(context.Background(), "slack:"+bottest.SlackTeam+"/"+mallory, store.RoleApprove); err != nil {
		t.Fatal(err)
	}
	m := r.slack.Mention(alice, channel, "", "ask the role approver too")
	ap := r.approvalMessage(t, m.TS)
	if !strings.Contains(ap.Text, "Asking: <@"+bob+">, <@"+mallory+">") {
		t.Errorf("the request does not ask the role's approver:\n%s", ap.Text)
	}
}

// An approver decides from a direct message with the bot by the
// approval's id; everyone else who tries changes nothing, and the
// decision is audited under the approver.
func TestDecideFromADirectMessage(t *testing.T) {
	r := newRig(t, approvalScript)
	ctx := context.Background()
	m := r.slack.Mention(alice, channel, "", "decide me from a DM")
	ap := r.approvalMessage(t, m.TS)
	id := r.taskOf(t, m.TS)
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
	if got := dmAnswer(mallory, "DMAL", "approve "+aid); !strings.Contains(got, "Only approvers") {
		t.Errorf("a non-approver's DM was answered %q", got)
	}
	// A stranger is refused once, however often they try.
	if got := dmAnswer(eve, "DEVE", "approve "+aid); !strings.Contains(got, "allow list") {
		t.Errorf("a stranger's DM was answered %q", got)
	}
	again := r.slack.DM(eve, "DEVE", "deny "+aid)
	if got := dmAnswer(alice, "DALI", "approve "+aid); !strings.Contains(got, "You asked for this task; another approver must decide") {
		t.Errorf("the requester's DM was answered %q", got)
	}
	if got := dmAnswer(bob, "DBOB", "approve a_0000000000aaaaaaaaaaaaaaaa"); !strings.Contains(got, "no approval") {
		t.Errorf("an unknown id was answered %q", got)
	}
	// The list shows what the asker may see from where they ask: the
	// channel's tasks in the channel, none of them in a DM.
	if got := dmAnswer(bob, "DBOB", "approvals"); strings.Contains(got, aid) {
		t.Errorf("bob's approvals list in a DM shows another conversation's approval: %q", got)
	}
	ask := r.slack.Mention(bob, channel, "", "approvals")
	eventually(t, "the approvals list in the channel", func() bool {
		msgs := r.slack.Thread(channel, ask.TS)
		return len(msgs) > 0 && strings.Contains(msgs[len(msgs)-1].Text, aid)
	})
	if pend, _ := r.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: id, State: store.ApprovalPending}); len(pend) != 1 {
		t.Fatalf("refused DMs changed the approval: %+v", pend)
	}
	if n := len(r.slack.Thread("DEVE", again.TS)); n != 0 {
		t.Errorf("the stranger's second try was answered (%d messages)", n)
	}
	// An id may be cut short, as in the CLI; a prefix that names nothing
	// bob may decide changes nothing.
	if got := dmAnswer(bob, "DBOB", "approve 0000zz"); !strings.Contains(got, "No approval waiting for you starts with a_0000zz") {
		t.Errorf("an unknown prefix was answered %q", got)
	}
	if got := dmAnswer(mallory, "DMAL", "approve "+aid[:10]); !strings.Contains(got, "Only approvers") {
		t.Errorf("a non-approver's prefix was answered %q", got)
	}
	if got := dmAnswer(bob, "DBOB", "approve "+strings.ToUpper(aid[2:12])); !strings.Contains(got, "Allowed once") || !strings.Contains(got, aid) {
		t.Fatalf("bob's DM with a prefix was answered %q", got)
	}
	if got := dmAnswer(bob, "DBOB", "deny "+aid); !strings.Contains(got, "decided already") {
		t.Errorf("a second decision was answered %q", got)
	}
	done := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	bobID := "slack:" + bottest.SlackTeam + "/" + bob
	audit, err := r.st.ApprovalAudit(ctx, aid)
	if err != nil {
		t.Fatal(err)
	}
	var decidedBy []string
	for _, e := range audit {
		if e.Action != "requested" {
			decidedBy = append(decidedBy, e.Actor)
		}
	}
	if len(decidedBy) != 1 || decidedBy[0] != bobID {
		t.Errorf("audit = %+v", audit)
	}
	eventually(t, "the approval message to show the decision", func() bool {
		for _, msg := range r.slack.Thread(channel, m.TS) {
			if msg.TS == ap.TS {
				return len(msg.Buttons) == 0 && strings.Contains(msg.Text, "Allowed once by "+bottest.SlackRealName(bob))
			}
		}
		return false
	})
}

// With [bot.slack] mention_approvers = false, a request still names the
// approvers who can decide, by name, but mentions (and so notifies) no
// one; with the default it mentions them.
func TestMentionApproversOff(t *testing.T) {
	off := false
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob, mallory},
		AllowChannels: []string{channel}, Approvers: []string{alice, bob}, MentionApprovers: &off}}
	r := newRigOpts(t, rigOpts{model: approvalScript, editInterval: 50 * time.Millisecond, bot: &b})
	m := r.slack.Mention(alice, channel, "", "touch a file, quietly")
	ap := r.approvalMessage(t, m.TS)
	if strings.Contains(ap.Text, "<@") {
		t.Errorf("the request mentions someone with mention_approvers off:\n%s", ap.Text)
	}
	if !strings.Contains(ap.Text, bottest.SlackRealName(bob)) || strings.Contains(ap.Text, "Asking: "+bottest.SlackRealName(alice)) {
		t.Errorf("the request does not name bob (only), the approver who can decide:\n%s", ap.Text)
	}
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	runnertest.WaitState(t, r.svc, r.taskOf(t, m.TS), 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
}
