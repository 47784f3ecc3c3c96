package runner_test

import (
	"context"
	"testing"
	"time"

	"reasonix/internal/eventually"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestSweepPrunesOldChatDeliveries: the leader's sweep deletes a chat
// delivery finished over a week ago and keeps one finished an hour ago.
func TestSweepPrunesOldChatDeliveries(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := storetest.SQLite(t, store.Config{Now: clk.Now})
	handled := func(key string) {
		t.Helper()
		if c, err := st.ClaimChatEvent(ctx, key, "n", time.Minute); err != nil || c != store.ChatClaimed {
			t.Fatalf("claim %s = %v, %v", key, c, err)
		}
		if err := st.FinishChatEvent(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	handled("slack:old")
	svc := runnertest.Start(t, runnertest.Options{Store: st, Now: clk.Now, Provider: echoProvider{},
		Configure: func(c *runner.Config) { c.SweepInterval = 20 * time.Millisecond }})
	// The first pass (at most a week after the delivery) keeps it.
	eventually.True(t, 10*time.Second, func() bool { return svc.Sweeps() >= 2 }, "the leader to sweep")
	if c, err := st.ClaimChatEvent(ctx, "slack:old", "probe", time.Minute); err != nil || c != store.ChatHandled {
		t.Fatalf("a fresh delivery after a sweep: claim = %v, %v; want handled", c, err)
	}

	clk.Advance(7*24*time.Hour + time.Hour)
	handled("slack:recent")
	clk.Advance(time.Hour)
	eventually.True(t, 10*time.Second, func() bool {
		// Probing re-creates the row once it is gone; that is the sign.
		c, err := st.ClaimChatEvent(ctx, "slack:old", "probe", time.Minute)
		return err == nil && c == store.ChatClaimed
	}, "the old delivery to be pruned")
	if c, err := st.ClaimChatEvent(ctx, "slack:recent", "probe", time.Minute); err != nil || c != store.ChatHandled {
		t.Errorf("a delivery finished an hour ago: claim = %v, %v; want handled (kept)", c, err)
	}
}
