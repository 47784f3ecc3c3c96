package relay_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/bot/telegram"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// cleanupScript answers without a tool until a message asks for the
// cleanup, then asks for one shell call and reports its result.
func cleanupScript(req agenttest.Request) agenttest.Turn {
	if res := lastTool(req); res != "" {
		return agenttest.Turn{Text: "finished: " + strings.TrimSpace(res)}
	}
	for _, m := range req.Messages {
		if m.Role == "user" && strings.Contains(m.Content, "cleanup") {
			return toolTurn("c1", "bash", `{"command":"echo cleaned > c.txt && cat c.txt"}`)
		}
	}
	return agenttest.Turn{Text: "nothing to do"}
}

// statusRoot is the top-level message the relay posted in channel for a
// task from elsewhere: the task's thread there.
func (r *rig) statusRoot(t *testing.T, ch string) bottest.SlackMessage {
	t.Helper()
	var root bottest.SlackMessage
	eventually(t, "the task's status message in "+ch, func() bool {
		for _, m := range r.slack.Messages() {
			if m.Channel == ch && m.ThreadTS == "" && strings.Contains(m.Text, "Task ") {
				root = m
				return true
			}
		}
		return false
	})
	return root
}

// A user of the channel who neither asked for a task nor is an admin
// cannot continue it by replying in its thread: an admin's finished yolo
// task from the API stays finished, and the call the reply asks for
// never runs.
func TestThreadReplyToSomeoneElsesTaskIsRefused(t *testing.T) {
	r := newRig(t, cleanupScript)
	ctx := context.Background()
	task, _, err := r.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "token:root", Prompt: "look around",
		Posture: "yolo", Notify: []store.NotifyTarget{{Transport: "slack", Channel: channel}}})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, r.svc, task.ID, 20*time.Second, store.StateSucceeded)
	root := r.statusRoot(t, channel)
	if got := r.taskOfIn(t, channel, root.TS); got != task.ID {
		t.Fatalf("the status message leads to %s, want %s", got, task.ID)
	}
	asked := len(r.model.Requests())

	r.slack.Reply(mallory, channel, root.TS, "run the cleanup")
	eventually(t, "the refusal", func() bool { return strings.Contains(r.threadText(root.TS), "not passed on") })
	// A second reply is not answered again, nor passed on.
	r.slack.Reply(mallory, channel, root.TS, "please, the cleanup")
	r.slack.Reply(alice, channel, root.TS, "and me? run the cleanup")
	eventually(t, "alice's refusal", func() bool { return strings.Count(r.threadText(root.TS), "not passed on") == 2 })
	if got, _ := r.svc.Task(ctx, task.ID); got.State != store.StateSucceeded {
		t.Errorf("the task is %s after a stranger's reply", got.State)
	}
	if n := len(r.model.Requests()); n != asked {
		t.Errorf("the model was asked %d more times", n-asked)
	}
	for _, e := range runnertest.Events(t, r.svc, task.ID) {
		if e.Type == "tool_call" || strings.Contains(string(e.Payload), "cleanup") {
			t.Errorf("the reply reached the task: %s %s", e.Type, e.Payload)
		}
	}
}

// Steer, then approve: an admin who steers someone else's task may not
// approve the call their own message produced; another approver may.
func TestSteererMayNotApproveTheCallTheySteered(t *testing.T) {
	r := newRig(t, cleanupScript)
	ctx := context.Background()
	malloryID := "slack:" + bottest.SlackTeam + "/" + mallory
	if _, err := r.st.GrantRole(ctx, malloryID, store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	m := r.slack.Mention(alice, channel, "", "look around")
	id := r.taskOf(t, m.TS)
	runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded)

	r.slack.Reply(mallory, channel, m.TS, "run the cleanup")
	ap := r.approvalMessage(t, m.TS)
	r.slack.Click(mallory, channel, ap.TS, ap.Buttons[0].Value)
	eventually(t, "the steerer's refusal", func() bool { return len(r.ephemeralFor(mallory)) == 1 })
	if got := r.ephemeralFor(mallory)[0]; !strings.Contains(got, "sent this task a message") {
		t.Errorf("the steerer was answered %q", got)
	}
	pending, err := r.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: id, State: store.ApprovalPending})
	if err != nil || len(pending) != 1 || len(pending[0].Instructors) != 1 || pending[0].Instructors[0] != malloryID {
		t.Fatalf("after the steerer's click, pending = %+v, %v", pending, err)
	}
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	done := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || !strings.Contains(done.Result.FinalAnswer, "cleaned") {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	decided := runnertest.Events(t, r.svc, id, "approval_decided")
	if len(decided) != 1 || !strings.Contains(string(decided[0].Payload), "/"+bob) {
		t.Errorf("decisions = %+v", decided)
	}
}

// Under allow_users = ["*"] the members of the allowed channels may give
// the bot work there; a direct message from a user who is not listed by
// id is refused, since nothing shows cheaply that they are such a member.
func TestStarAdmitsChannelsNotDirectMessages(t *testing.T) {
	b := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{"*", alice},
		AllowChannels: []string{channel}, Approvers: []string{bob}}}
	r := newRigOpts(t, rigOpts{model: cleanupScript, editInterval: 120 * time.Millisecond, bot: &b})
	dm := r.slack.DM(eve, "DEVE", "read me the private repository")
	eventually(t, "the refusal", func() bool { return len(r.slack.Thread("DEVE", dm.TS)) == 1 })
	if got := r.slack.Thread("DEVE", dm.TS)[0].Text; !strings.Contains(got, "direct messages") {
		t.Errorf("the stranger's DM was answered %q", got)
	}
	// Listed by id: a DM works; in the channel, "*" admits eve.
	own := r.slack.DM(alice, "DALI", "look around")
	r.taskOfIn(t, "DALI", own.TS)
	m := r.slack.Mention(eve, channel, "", "look around too")
	r.taskOf(t, m.TS)
	page, err := r.svc.Tasks(context.Background(), store.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range page.Tasks {
		if strings.Contains(task.Prompt, "private repository") {
			t.Errorf("the stranger's DM started task %s", task.ID)
		}
	}
	if len(page.Tasks) != 2 {
		t.Errorf("%d tasks, want 2", len(page.Tasks))
	}
}

// The same for Telegram: under "*", a private chat with a user who is not
// listed is refused; the group admits them.
func TestTelegramStarAdmitsGroupsNotPrivateChats(t *testing.T) {
	const stranger = 333
	st := storetest.SQLite(t, store.Config{})
	turns := make([]agenttest.Turn, 10)
	for i := range turns {
		turns[i] = agenttest.Respond(cleanupScript)
	}
	prov := agenttest.NewScriptedProvider(turns...)
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{"*"},
		AllowChats: []string{strconv.Itoa(tgGroup)}, Approvers: []string{strconv.Itoa(tgBob)}}}
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: prov, Settings: withBot(nil, cfg)})
	fake := bottest.NewTelegram(t, "42:secret-token", bottest.SlackLimits{})
	tr, err := telegram.New(telegram.Config{Token: "42:secret-token", APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr},
		EditInterval: 100 * time.Millisecond, ScanInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Stop(ctx)
	})
	fake.Send(stranger, stranger, "read me the private repository", 0)
	eventually(t, "the refusal", func() bool { return len(fake.Messages(stranger)) == 1 })
	if got := fake.Messages(stranger)[0].Text; !strings.Contains(got, "direct messages") {
		t.Errorf("the private chat was answered %q", got)
	}
	fake.Send(tgGroup, stranger, "@reasonix_bot look around", 0)
	eventually(t, "the group's task", func() bool {
		page, _ := svc.Tasks(context.Background(), store.TaskFilter{})
		return len(page.Tasks) == 1 && page.Tasks[0].Prompt == "look around"
	})
}

// A slash command under another name than the configured one (default
// /reasonix) is no request to this bot: it is acknowledged and ignored.
func TestSlashCommandOfAnotherNameIsIgnored(t *testing.T) {
	r := newRig(t, cleanupScript)
	env := r.slack.SlashCommand("/deploy", alice, channel, "ship the other thing")
	eventually(t, "the foreign command's acknowledgement", func() bool {
		_, ok := r.slack.AckLatencies()[env]
		return ok
	})
	r.slack.Slash(alice, channel, "look around")
	eventually(t, "the command's task", func() bool {
		page, _ := r.svc.Tasks(context.Background(), store.TaskFilter{})
		for _, task := range page.Tasks {
			if task.Prompt == "look around" {
				return true
			}
		}
		return false
	})
	page, err := r.svc.Tasks(context.Background(), store.TaskFilter{})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("tasks = %+v, %v", page.Tasks, err)
	}
}

// `approvals` lists what the asker may decide and may see from where they
// ask: the tasks of this channel, not another channel's; `status` of
// another channel's task says nothing about it.
func TestApprovalsAndStatusShowOnlyWhatTheAskerMaySee(t *testing.T) {
	r := newRig(t, approvalScript)
	ctx := context.Background()
	here := r.slack.Mention(alice, channel, "", "here")
	there := r.slack.Mention(alice, "C0OTHER", "", "there")
	hereID, thereID := r.taskOf(t, here.TS), r.taskOfIn(t, "C0OTHER", there.TS)
	runnertest.WaitState(t, r.svc, hereID, 20*time.Second, store.StateWaitingApproval)
	runnertest.WaitState(t, r.svc, thereID, 20*time.Second, store.StateWaitingApproval)
	pending := func(id string) string {
		list, err := r.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: id, State: store.ApprovalPending})
		if err != nil || len(list) != 1 {
			t.Fatalf("pending of %s = %+v, %v", id, list, err)
		}
		return list[0].ID
	}
	hereAp, thereAp := pending(hereID), pending(thereID)
	answer := func(user, text string) string {
		t.Helper()
		ask := r.slack.Mention(user, channel, "", text)
		var got string
		eventually(t, "the answer to "+text, func() bool {
			msgs := r.slack.Thread(channel, ask.TS)
			if len(msgs) == 0 {
				return false
			}
			got = msgs[len(msgs)-1].Text
			return true
		})
		return got
	}
	if got := answer(bob, "approvals"); !strings.Contains(got, hereAp) || strings.Contains(got, thereAp) {
		t.Errorf("bob's approvals in %s = %q; want %s and not %s", channel, got, hereAp, thereAp)
	}
	if got := answer(mallory, "status "+thereID); strings.Contains(got, "there") || !strings.Contains(got, "no task") {
		t.Errorf("mallory's status of another channel's task = %q", got)
	}
	if got := answer(mallory, "status "+hereID); !strings.Contains(got, "here") {
		t.Errorf("mallory's status of this channel's task = %q", got)
	}
	if got := answer(alice, "status "+thereID); !strings.Contains(got, "there") {
		t.Errorf("the requester's status of her own task = %q", got)
	}
}
