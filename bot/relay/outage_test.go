package relay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"reasonix/agent/agenttest"
	"reasonix/bot/bottest"
	"reasonix/config"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestTelegramDMSurvivesAStoreOutage: the relay's store fails while a DM
// is claimed (its chat_events table is gone for a while). The relay
// leaves the update; the poller keeps the offset at it and fetches it
// again, backing off; once the store is back the task starts: one task,
// one acknowledgement, one report, and the offset moves past the DM.
func TestTelegramDMSurvivesAStoreOutage(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	open := func() *store.Store {
		st, err := store.Open(ctx, store.Config{Driver: store.DriverPostgres, DSN: dsn, Logger: storetest.Quiet()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	}
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	exec := func(q string) {
		t.Helper()
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	turns := make([]agenttest.Turn, 10)
	for i := range turns {
		turns[i] = agenttest.Turn{Text: "tg-outage-report"}
	}
	const tgToken = "42:outage-token"
	fake := bottest.NewTelegram(t, tgToken, bottest.SlackLimits{})
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{"111"}}}
	n := startTelegramNode(t, tgNodeSpec{open: open, prov: agenttest.NewScriptedProvider(turns...), fake: fake, token: tgToken, cfg: cfg}, "A")
	count := func(substr string) int {
		c := 0
		for _, m := range fake.Messages(tgAlice) {
			if strings.Contains(m.Text, substr) {
				c++
			}
		}
		return c
	}
	offset := func() int64 {
		v, err := n.st.ChatCursor(ctx, "telegram:offset")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	eventually(t, "node A to poll", func() bool { return len(fake.Polls()) > 0 })

	exec("ALTER TABLE chat_events RENAME TO chat_events_away") // claiming a delivery fails
	fake.Send(tgAlice, tgAlice, "fix the outage", 0)
	dm := fake.LastUpdate()
	eventually(t, "the DM to be fetched again", func() bool {
		again := 0
		for _, o := range fake.Polls() {
			if o == dm {
				again++
			}
		}
		return again >= 2 // every poll from the DM's id returns it
	})
	if got := offset(); got != dm {
		t.Errorf("offset %d while the DM (%d) is not handled, want %d", got, dm, dm)
	}
	if c := count("queued t_"); c != 0 {
		t.Fatalf("%d acknowledgements while the store was failing", c)
	}
	if polls := len(fake.Polls()); polls > 10 {
		t.Errorf("%d polls so far: the poller did not back off", polls)
	}

	exec("ALTER TABLE chat_events_away RENAME TO chat_events")
	eventually(t, "the task's report", func() bool { return count("tg-outage-report") >= 1 })
	eventually(t, "the offset to move past the DM", func() bool { return offset() == dm+1 })
	page, err := n.st.ListTasks(ctx, store.TaskFilter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 1 || page.Tasks[0].Prompt != "fix the outage" {
		t.Errorf("tasks = %+v, want the DM's one", page.Tasks)
	}
	if c := count("queued t_"); c != 1 {
		t.Errorf("%d acknowledgements, want 1", c)
	}
}
