package relay_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot/relay"
	"reasonix/runner/store"
)

// Slack is acknowledged once a delivery is recorded in the store, before
// it is handled: these tests slow or kill the handling and count what
// comes of it with the relay's real receipts in the store.

// An event whose handling is slow (its acknowledging reaction takes 1.5 s)
// is acknowledged at once all the same, so Slack does not retry it, and
// is handled once: one task, one acknowledgement, one status.
func TestSlowSlackEventIsAcknowledgedAtOnce(t *testing.T) {
	r := newClaimRig(t, testWindow)
	// Slack retries an event not acknowledged within 3 s; sooner here.
	r.slack.RetryUnacked(time.Second, time.Minute)
	r.slack.Slow(1500 * time.Millisecond)
	ev := r.slack.Mention(alice, channel, "", "rename the config key")
	eventually(t, "the acknowledgement", func() bool { _, acked := r.slack.Envelopes(ev.ID); return acked == 1 })
	for env, d := range r.slack.AckLatencies() {
		if d > 500*time.Millisecond {
			t.Errorf("envelope %s acknowledged after %v; recording it is all that should take", env, d)
		}
	}
	eventually(t, "the status message", func() bool { return r.statusPosts(ev.TS) == 1 })
	r.slack.Slow(0)
	settle(t, r.relay, false)
	if sent, _ := r.slack.Envelopes(ev.ID); sent != 1 {
		t.Errorf("Slack sent the event %d times, want once", sent)
	}
	if got := r.tasksWithPrompt(t, "rename the config key"); len(got) != 1 {
		t.Errorf("tasks = %d, want 1", len(got))
	}
	if n := r.reactionsOn(ev.TS); n != 1 {
		t.Errorf("acknowledgements = %d, want 1", n)
	}
}

// TestSlackReceiptRecoveredAfterACrash: node A records a mention on receipt
// (Slack has its acknowledgement) and dies before handling it. Slack will
// not send it again; node B's recovery pass handles it from the stored
// message once A's claim is stale: one task, one status message, and the
// delivery finished, so no later pass handles it again.
const recoverEvery = 50 * time.Millisecond

func TestSlackReceiptRecoveredAfterACrash(t *testing.T) {
	r := newRigOpts(t, rigOpts{
		model:        func(agenttest.Request) agenttest.Turn { return agenttest.Turn{Text: "done"} },
		editInterval: 50 * time.Millisecond,
		tune: func(c *relay.Config) {
			c.ClaimWindow = testWindow
			c.RecoverInterval = recoverEvery
			c.Node = "B"
		},
	})
	ctx := context.Background()
	in := mention("EvDied1", "1700000200.000001", "recover me: fix the build")
	payload, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	recorded := time.Now()
	if c, err := r.st.RecordChatEvent(ctx, "slack:EvDied1", "A", payload, testWindow); err != nil || c != store.ChatClaimed {
		t.Fatalf("node A's receipt = %v, %v", c, err)
	}
	eventually(t, "node B to start the task", func() bool { return len(r.tasksWithPrompt(t, in.Text)) == 1 })
	if took := time.Since(recorded); took < testWindow {
		t.Errorf("recovered %v after the receipt, while node A's claim was fresh for %v", took, testWindow)
	}
	eventually(t, "the status message", func() bool { return r.statusPosts(in.MessageID) == 1 })
	// Several more recovery passes, past the window again: the passes
	// are a RecoverInterval apart at least.
	_, passes := r.relay.Passes()
	more := int64(2*testWindow/recoverEvery) + 1
	eventually(t, "more recovery passes", func() bool { _, n := r.relay.Passes(); return n >= passes+more })
	if got := r.tasksWithPrompt(t, in.Text); len(got) != 1 {
		t.Errorf("tasks = %d, want 1", len(got))
	}
	if n := r.statusPosts(in.MessageID); n != 1 {
		t.Errorf("status messages = %d, want 1:\n%s", n, r.threadText(in.MessageID))
	}
	if c, err := r.st.ClaimChatEvent(ctx, "slack:EvDied1", "probe", 0); err != nil || c != store.ChatHandled {
		t.Errorf("the delivery's claim = %v, %v; want handled", c, err)
	}
}

// Receive records a delivery once: a retry while it is under way, and
// one after it was handled, get nothing to run; the handling it hands
// back runs at once, without claiming the delivery again (a second claim
// would wait out this node's own fresh claim), and finishes it.
func TestReceiveRecordsADeliveryOnce(t *testing.T) {
	r := newClaimRig(t, 10*time.Second)
	ctx := context.Background()
	in := mention("EvRecv1", "1700000300.000001", "record me once")
	run, err := r.relay.Receive(ctx, in)
	if err != nil || run == nil {
		t.Fatalf("first receipt: run %v, err %v", run != nil, err)
	}
	if again, err := r.relay.Receive(ctx, in); err != nil || again != nil {
		t.Fatalf("a retry while under way: run %v, err %v; want nothing to run", again != nil, err)
	}
	start := time.Now()
	run(ctx)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the handling took %v: it waited on its own claim", took)
	}
	if got := r.tasksWithPrompt(t, in.Text); len(got) != 1 {
		t.Fatalf("tasks = %d, want 1", len(got))
	}
	if c, err := r.st.ClaimChatEvent(ctx, "slack:EvRecv1", "probe", 0); err != nil || c != store.ChatHandled {
		t.Errorf("the delivery's claim = %v, %v; want handled", c, err)
	}
	if again, err := r.relay.Receive(ctx, in); err != nil || again != nil {
		t.Fatalf("a retry after handling: run %v, err %v; want nothing to run", again != nil, err)
	}
}
