package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// A relay that dies mid-handling leaves its delivery claimed and not
// finished. These tests stand in for the dead relay by doing in the store
// what it got done (its claim, and in some cases its submit or steer) and
// hand the platform's redelivery to the live relay on the same store: the
// redelivery records the message with the claim, and the live relay's
// recovery pass handles it once the dead claim is stale.

// mention is a Slack app_mention delivery as the transport hands it over.
func mention(eventID, ts, text string) bot.Inbound {
	return bot.Inbound{Transport: "slack", EventID: eventID, Team: bottest.SlackTeam, User: alice,
		Channel: channel, MessageID: ts, Text: text, Addressed: true}
}

// reply is a plain reply in a task's thread, by its requester.
func reply(eventID, thread, ts, text string) bot.Inbound {
	return bot.Inbound{Transport: "slack", EventID: eventID, Team: bottest.SlackTeam, User: alice,
		Channel: channel, Thread: thread, MessageID: ts, Text: text}
}

// deadClaim takes key's claim as a node that then dies.
func deadClaim(t *testing.T, st *store.Store, key string) {
	t.Helper()
	c, err := st.ClaimChatEvent(context.Background(), key, "dead-node", time.Minute)
	if err != nil || c != store.ChatClaimed {
		t.Fatalf("the dead node's claim of %s = %v, %v", key, c, err)
	}
}

func (r *rig) tasksWithPrompt(t *testing.T, prompt string) []store.Task {
	t.Helper()
	page, err := r.svc.Tasks(context.Background(), store.TaskFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Task
	for _, task := range page.Tasks {
		if task.Prompt == prompt {
			out = append(out, task)
		}
	}
	return out
}

// statusPosts counts the task status messages posted in thread (edits
// change a message, not the count), and the final reports.
func (r *rig) statusPosts(thread string) int {
	n, reports := 0, 0
	for _, m := range r.slack.Thread(channel, thread) {
		if strings.Contains(m.Text, "*Task ") && strings.Contains(m.Text, "* — ") {
			n++
		}
		if strings.Contains(m.Text, "*Task ") && strings.Contains(m.Text, " done*") {
			reports++
		}
	}
	if reports > 1 {
		return -reports // a report posted twice is as wrong as a status
	}
	return n
}

func (r *rig) reactionsOn(ts string) int {
	n := 0
	for _, x := range r.slack.Reactions() {
		if strings.HasPrefix(x, channel+"/"+ts+"/") {
			n++
		}
	}
	return n
}

// settle waits for rl to look again: three more scans for live tasks (a
// watcher a scan starts twice would post twice) and, with recovery set,
// two more recovery passes (a delivery handled twice would show), so a
// duplicate they would make has had its chance to show.
func settle(t testing.TB, rl *relay.Relay, recovery bool) {
	t.Helper()
	scans, recoveries := rl.Passes()
	eventually(t, "the relay to look again", func() bool {
		s, r := rl.Passes()
		return s >= scans+3 && (!recovery || r >= recoveries+2)
	})
}

const testWindow = 300 * time.Millisecond

func newClaimRig(t *testing.T, window time.Duration) *rig {
	return newRigOpts(t, rigOpts{
		model:        func(agenttest.Request) agenttest.Turn { return agenttest.Turn{Text: "done"} },
		editInterval: 50 * time.Millisecond,
		tune:         func(c *relay.Config) { c.ClaimWindow, c.RecoverInterval = window, 50*time.Millisecond },
	})
}

// waitHandled waits for delivery key to be handled to its end.
func (r *rig) waitHandled(t *testing.T, key string) {
	t.Helper()
	eventually(t, key+" to be handled", func() bool {
		c, err := r.st.ClaimChatEvent(context.Background(), key, "probe", time.Hour) // a probe: claims nothing fresher than an hour
		return err == nil && c == store.ChatHandled
	})
}

func TestRedeliveryAfterACrashSubmitsOnce(t *testing.T) {
	r := newClaimRig(t, testWindow)
	ctx := context.Background()

	// The node died after claiming and before submitting: the redelivery
	// is recorded, and the task started once the claim is stale.
	in := mention("EvCrash1", "1700000100.000001", "fix the flaky test")
	deadClaim(t, r.st, "slack:EvCrash1")
	start := time.Now()
	r.relay.HandleMessage(ctx, in)
	eventually(t, "the task", func() bool { return len(r.tasksWithPrompt(t, in.Text)) > 0 })
	if took := time.Since(start); took < testWindow/2 {
		t.Errorf("the redelivery was handled %v after the claim; the claim was fresh for %v", took, testWindow)
	}
	r.waitHandled(t, "slack:EvCrash1")
	if got := r.tasksWithPrompt(t, in.Text); len(got) != 1 {
		t.Fatalf("tasks after the redelivery = %d, want 1", len(got))
	}
	eventually(t, "the status message", func() bool { return r.statusPosts(in.MessageID) == 1 })
	// The event is finished: another redelivery is dropped.
	if c, err := r.st.ClaimChatEvent(ctx, "slack:EvCrash1", "probe", 0); err != nil || c != store.ChatHandled {
		t.Errorf("claim after handling = %v, %v; want handled", c, err)
	}
	r.relay.HandleMessage(ctx, in)
	settle(t, r.relay, true)
	if got := r.tasksWithPrompt(t, in.Text); len(got) != 1 {
		t.Errorf("tasks = %d, want 1", len(got))
	}
	if n := r.statusPosts(in.MessageID); n != 1 {
		t.Errorf("status messages = %d, want 1:\n%s", n, r.threadText(in.MessageID))
	}
	if n := r.reactionsOn(in.MessageID); n != 1 {
		t.Errorf("acknowledgements = %d, want 1", n)
	}

	// The node died after submitting, before acknowledging: the
	// redelivery finds the task (no second one), and acknowledges it once.
	in = mention("EvCrash2", "1700000100.000002", "update the changelog")
	deadClaim(t, r.st, "slack:EvCrash2")
	first, created, err := r.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceSlack, Requester: in.Requester(),
		Prompt: in.Text, DedupeKey: "slack:EvCrash2",
		Notify: []store.NotifyTarget{{Transport: "slack", Channel: channel, Thread: in.MessageID}}})
	if err != nil || !created {
		t.Fatalf("the dead node's submit = %v, %v", created, err)
	}
	r.relay.HandleMessage(ctx, in)
	r.relay.HandleMessage(ctx, in)
	r.waitHandled(t, "slack:EvCrash2")
	eventually(t, "the status message", func() bool { return r.statusPosts(in.MessageID) == 1 })
	settle(t, r.relay, true)
	got := r.tasksWithPrompt(t, in.Text)
	if len(got) != 1 || got[0].ID != first.ID {
		t.Fatalf("tasks = %v, want only %s", got, first.ID)
	}
	if id, err := r.st.ThreadTask(ctx, "slack", channel, in.MessageID); err != nil || id != first.ID {
		t.Errorf("thread task = %q, %v; want %s", id, err, first.ID)
	}
	if n := r.statusPosts(in.MessageID); n != 1 {
		t.Errorf("status messages = %d, want 1:\n%s", n, r.threadText(in.MessageID))
	}
	if n := r.reactionsOn(in.MessageID); n != 1 {
		t.Errorf("acknowledgements = %d, want 1", n)
	}

	// The node died after submitting and acknowledging (its reaction is
	// recorded under the delivery): the redelivery acknowledges nothing.
	in = mention("EvCrash3", "1700000100.000003", "bump the version")
	deadClaim(t, r.st, "slack:EvCrash3")
	third, _, err := r.svc.Submit(ctx, runner.TaskRequest{Source: store.SourceSlack, Requester: in.Requester(),
		Prompt: in.Text, DedupeKey: "slack:EvCrash3",
		Notify: []store.NotifyTarget{{Transport: "slack", Channel: channel, Thread: in.MessageID}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.st.SaveChatPost(ctx, store.ChatPost{TaskID: third.ID, Key: "ack:slack:EvCrash3", Transport: "slack",
		Channel: channel, MessageID: in.MessageID}); err != nil {
		t.Fatal(err)
	}
	r.relay.HandleMessage(ctx, in)
	r.waitHandled(t, "slack:EvCrash3")
	eventually(t, "the status message", func() bool { return r.statusPosts(in.MessageID) == 1 })
	settle(t, r.relay, true)
	if got := r.tasksWithPrompt(t, in.Text); len(got) != 1 {
		t.Errorf("tasks = %d, want 1", len(got))
	}
	if n := r.reactionsOn(in.MessageID); n != 0 {
		t.Errorf("acknowledgements by the redelivery = %d, want 0 (the dead node's stands)", n)
	}
	if n := r.statusPosts(in.MessageID); n != 1 {
		t.Errorf("status messages = %d, want 1:\n%s", n, r.threadText(in.MessageID))
	}
}

func TestRedeliveryAfterACrashSteersOnce(t *testing.T) {
	r := newClaimRig(t, testWindow)
	ctx := context.Background()
	task := mention("EvTask", "1700000200.000001", "write the release notes")
	r.relay.HandleMessage(ctx, task)
	id := r.taskOf(t, task.MessageID)
	runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded)

	// Died after claiming the reply, before passing it on.
	steer := reply("EvSteer1", task.MessageID, "1700000200.000002", "mention the migration")
	deadClaim(t, r.st, "slack:EvSteer1")
	r.relay.HandleMessage(ctx, steer)
	r.relay.HandleMessage(ctx, steer)
	// Died after passing it on, before finishing.
	steer2 := reply("EvSteer2", task.MessageID, "1700000200.000003", "and the new flag")
	deadClaim(t, r.st, "slack:EvSteer2")
	if _, err := r.svc.MessageOnce(ctx, id, runner.Principal{ID: steer2.Requester()}, steer2.Text, "slack:EvSteer2"); err != nil {
		t.Fatal(err)
	}
	r.relay.HandleMessage(ctx, steer2)
	r.relay.HandleMessage(ctx, steer2)

	eventually(t, "the continued task to see both replies", func() bool {
		for _, req := range r.model.Requests() {
			all := ""
			for _, m := range req.Messages {
				all += m.Content + "\n"
			}
			if strings.Contains(all, steer.Text) && strings.Contains(all, steer2.Text) {
				return true
			}
		}
		return false
	})
	runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded)
	settle(t, r.relay, true)
	counts := map[string]int{}
	for _, ev := range runnertest.Events(t, r.svc, id, "message") {
		for _, s := range []string{steer.Text, steer2.Text} {
			if strings.Contains(string(ev.Payload), s) {
				counts[s]++
			}
		}
	}
	for _, s := range []string{steer.Text, steer2.Text} {
		if counts[s] != 1 {
			t.Errorf("%q reached the task %d times, want once", s, counts[s])
		}
	}
	// No model request holds a reply twice.
	for i, req := range r.model.Requests() {
		for _, s := range []string{steer.Text, steer2.Text} {
			n := 0
			for _, m := range req.Messages {
				n += strings.Count(m.Content, s)
			}
			if n > 1 {
				t.Errorf("request %d holds %q %d times", i, s, n)
			}
		}
	}
	for _, ts := range []string{steer.MessageID, steer2.MessageID} {
		if n := r.reactionsOn(ts); n != 1 {
			t.Errorf("acknowledgements of reply %s = %d, want 1", ts, n)
		}
	}
}

// A redelivery of a delivery whose handler is still at work (the claim is
// fresh) is not handled: it is recorded and left to that handler — or,
// should it die, to the recovery pass once its claim is stale — and the
// redelivery's receiver returns at once, for its platform to be answered.
func TestRedeliveryWithinTheWindowIsLeftToItsReceiver(t *testing.T) {
	r := newClaimRig(t, time.Hour)
	ctx := context.Background()

	in := mention("EvBusy1", "1700000300.000001", "refactor the parser")
	deadClaim(t, r.st, "slack:EvBusy1") // a live, slow handler's claim
	run, err := r.relay.Receive(ctx, in)
	if err != nil || run != nil {
		t.Fatalf("Receive of a delivery under a fresh claim = %v, %v; want nothing to run", run != nil, err)
	}
	r.relay.HandleMessage(ctx, in) // returns: nothing to wait for
	settle(t, r.relay, true)
	if got := r.tasksWithPrompt(t, in.Text); len(got) != 0 {
		t.Errorf("%q started %d tasks; its first handler owns it", in.Text, len(got))
	}
	if n := r.reactionsOn(in.MessageID); n != 0 {
		t.Errorf("%q acknowledged %d times by the redelivery", in.Text, n)
	}
	// The claim is still the first handler's, not finished, and the
	// message is recorded with it for the recovery pass.
	if c, err := r.st.ClaimChatEvent(ctx, "slack:EvBusy1", "probe", time.Hour); err != nil || c != store.ChatInFlight {
		t.Errorf("claim after the redelivery = %v, %v; want in flight", c, err)
	}
	list, err := r.st.UnfinishedChatEvents(ctx, 0, time.Now().Add(-time.Minute), 10)
	if err != nil || len(list) != 1 || list[0].Key != "slack:EvBusy1" || list[0].ClaimedBy != "dead-node" {
		t.Errorf("unfinished deliveries = %+v, %v; want the redelivered one, still the first handler's", list, err)
	}
}

// A decision in a direct message is taken once by the store: handled again
// after a crash, it decides nothing twice and says so.
func TestRedeliveredDecisionInADMDecidesOnce(t *testing.T) {
	r := newRigOpts(t, rigOpts{model: approvalScript, editInterval: 50 * time.Millisecond,
		// A window well beyond a handling's length even under -race: a
		// first handling that outlives the window is taken over by the
		// recovery pass, which answers "decided already" before it does.
		tune: func(c *relay.Config) { c.ClaimWindow, c.RecoverInterval = 2*time.Second, 50*time.Millisecond }})
	ctx := context.Background()
	m := r.slack.Mention(alice, channel, "", "decide me twice")
	r.approvalMessage(t, m.TS)
	id := r.taskOf(t, m.TS)
	pending, err := r.svc.Approvals(ctx, runner.ApprovalFilter{TaskID: id, State: store.ApprovalPending})
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	dm := bot.Inbound{Transport: "slack", EventID: "EvDecide", Team: bottest.SlackTeam, User: bob,
		Channel: "DBOB", MessageID: "1700000400.000001", Text: "approve " + pending[0].ID, DM: true, Addressed: true}
	r.relay.HandleMessage(ctx, dm)
	// Handled again, as a node that died after deciding and before
	// finishing has it handled again by a redelivery (under another event
	// id here, the first being finished; a decision does not key on it).
	deadClaim(t, r.st, "slack:EvDecide2")
	dm.EventID = "EvDecide2"
	r.relay.HandleMessage(ctx, dm)
	if got := runnertest.WaitState(t, r.svc, id, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked); got.State != store.StateSucceeded {
		t.Fatalf("task = %s %+v", got.State, got.Result)
	}
	if decided := runnertest.Events(t, r.svc, id, "approval_decided"); len(decided) != 1 {
		t.Errorf("decisions = %d, want 1", len(decided))
	}
	eventually(t, "the second answer", func() bool { return len(r.slack.Thread("DBOB", dm.MessageID)) >= 2 })
	answers := r.slack.Thread("DBOB", dm.MessageID)
	if len(answers) != 2 || !strings.Contains(answers[0].Text, "Allowed once") || !strings.Contains(answers[1].Text, "decided already") {
		t.Errorf("answers = %+v; want the decision, then that it was decided already", answers)
	}
}

// A refused or ignored delivery is finished, so it is not handled again;
// one whose action failed in a way a retry may get past is left
// unfinished and its claim released, for the next recovery pass.
func TestRefusedDeliveriesFinishFailedOnesAreLeftForRecovery(t *testing.T) {
	r := newClaimRig(t, time.Hour) // no recovery during the test
	ctx := context.Background()
	state := func(key string) store.ChatClaim {
		t.Helper()
		c, err := r.st.ClaimChatEvent(ctx, key, "probe", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	stranger := mention("EvStranger", "1700000500.000001", "let me in")
	stranger.User = eve
	chatter := reply("EvChatter", "1700000500.999999", "1700000500.000002", "not a task's thread")
	for _, in := range []bot.Inbound{stranger, chatter} {
		r.relay.HandleMessage(ctx, in)
	}
	for _, key := range []string{"slack:EvStranger", "slack:EvChatter"} {
		if c := state(key); c != store.ChatHandled {
			t.Errorf("%s = %v, want handled", key, c)
		}
	}

	// The service is shutting down: the submit fails, the user is told,
	// and the delivery is left unfinished, with its message, for recovery.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := r.svc.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	late := mention("EvLate", "1700000500.000003", "fix the docs while stopping")
	r.relay.HandleMessage(ctx, late)
	// Released: stale for any claim window, so the next recovery pass
	// takes it, with its message.
	list, err := r.st.UnfinishedChatEvents(ctx, time.Hour, time.Now().Add(-time.Minute), 10)
	if err != nil || len(list) != 1 || list[0].Key != "slack:EvLate" {
		t.Errorf("released deliveries = %+v, %v; want the failed one", list, err)
	}
	if got := r.threadText(late.MessageID); !strings.Contains(got, "shutting down") {
		t.Errorf("the user was told %q", got)
	}
}
