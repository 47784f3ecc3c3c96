package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reasonix/agent/agenttest"
	"reasonix/bot/bottest"
	"reasonix/config"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// outage is one Telegram node on Postgres whose tables a test takes away
// for a while, through an admin connection of its own.
type outage struct {
	t     *testing.T
	n     tgNode
	fake  *bottest.Telegram
	admin *pgx.Conn
}

func newOutage(t *testing.T) *outage {
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
	t.Cleanup(func() { admin.Close(context.Background()) })
	turns := make([]agenttest.Turn, 10)
	for i := range turns {
		turns[i] = agenttest.Turn{Text: "tg-outage-report"}
	}
	const tgToken = "42:outage-token"
	fake := bottest.NewTelegram(t, tgToken, bottest.SlackLimits{})
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{"111"}}}
	n := startTelegramNode(t, tgNodeSpec{open: open, prov: agenttest.NewScriptedProvider(turns...), fake: fake, token: tgToken, cfg: cfg}, "A")
	eventually(t, "node A to poll", func() bool { return len(fake.Polls()) > 0 })
	return &outage{t: t, n: n, fake: fake, admin: admin}
}

func (o *outage) exec(q string) {
	o.t.Helper()
	if _, err := o.admin.Exec(context.Background(), q); err != nil {
		o.t.Fatal(err)
	}
}

// count is how many of the bot's messages to Alice contain substr.
func (o *outage) count(substr string) int {
	c := 0
	for _, m := range o.fake.Messages(tgAlice) {
		if strings.Contains(m.Text, substr) {
			c++
		}
	}
	return c
}

func (o *outage) offset() int64 {
	v, err := o.n.st.ChatCursor(context.Background(), "telegram:offset")
	if err != nil {
		o.t.Fatal(err)
	}
	return v
}

// fetchedAgain waits until the update dm was fetched at least twice:
// every poll from its id returns it.
func (o *outage) fetchedAgain(dm int64) {
	eventually(o.t, "the DM to be fetched again", func() bool {
		again := 0
		for _, p := range o.fake.Polls() {
			if p == dm {
				again++
			}
		}
		return again >= 2
	})
}

// handledOnce checks the end: one task for the DM, one acknowledgement,
// and the offset past the DM.
func (o *outage) handledOnce(dm int64) {
	o.t.Helper()
	eventually(o.t, "the task's report", func() bool { return o.count("tg-outage-report") >= 1 })
	eventually(o.t, "the offset to move past the DM", func() bool { return o.offset() == dm+1 })
	page, err := o.n.st.ListTasks(context.Background(), store.TaskFilter{Limit: 50})
	if err != nil {
		o.t.Fatal(err)
	}
	if len(page.Tasks) != 1 || page.Tasks[0].Prompt != "fix the outage" {
		o.t.Errorf("tasks = %+v, want the DM's one", page.Tasks)
	}
	if c := o.fake.Reacted(tgAlice, "👀"); c != 1 {
		o.t.Errorf("%d acknowledgements, want 1", c)
	}
}

// TestTelegramDMSurvivesAStoreOutage: the relay's store fails while a DM
// is claimed (its chat_events table is gone for a while). The relay
// leaves the update; the poller keeps the offset at it and fetches it
// again, backing off; once the store is back the task starts: one task,
// one acknowledgement, one report, and the offset moves past the DM.
func TestTelegramDMSurvivesAStoreOutage(t *testing.T) {
	o := newOutage(t)
	o.exec("ALTER TABLE chat_events RENAME TO chat_events_away") // claiming a delivery fails
	o.fake.Send(tgAlice, tgAlice, "fix the outage", 0)
	dm := o.fake.LastUpdate()
	o.fetchedAgain(dm)
	if got := o.offset(); got != dm {
		t.Errorf("offset %d while the DM (%d) is not handled, want %d", got, dm, dm)
	}
	if c := o.fake.Reacted(tgAlice, "👀"); c != 0 {
		t.Fatalf("%d acknowledgements while the store was failing", c)
	}
	if polls := len(o.fake.Polls()); polls > 10 {
		t.Errorf("%d polls so far: the poller did not back off", polls)
	}
	o.exec("ALTER TABLE chat_events_away RENAME TO chat_events")
	o.handledOnce(dm)
}

// TestTelegramDMFailedAfterItsClaimIsHandledAtOnce: the DM is recorded
// (and so acknowledged to Telegram: the offset moves past it) but starting
// its task fails (the dedupe_keys table is gone for a while). The relay
// gives its claim up, so once the store is back the next recovery pass
// handles the recorded DM, well before the claim window (15 s) would have
// let it be claimed again.
func TestTelegramDMFailedAfterItsClaimIsHandledAtOnce(t *testing.T) {
	o := newOutage(t)
	o.exec("ALTER TABLE dedupe_keys RENAME TO dedupe_keys_away") // submitting the task fails
	o.fake.Send(tgAlice, tgAlice, "fix the outage", 0)
	dm := o.fake.LastUpdate()
	eventually(t, "the DM to be recorded and acknowledged", func() bool { return o.offset() == dm+1 })
	eventually(t, "a failed attempt to be told", func() bool { return o.count("went wrong") >= 1 })
	if c := o.fake.Reacted(tgAlice, "👀"); c != 0 {
		t.Fatalf("%d acknowledgements while submitting failed", c)
	}
	o.exec("ALTER TABLE dedupe_keys_away RENAME TO dedupe_keys")
	back := time.Now()
	eventually(t, "the acknowledgement", func() bool { return o.fake.Reacted(tgAlice, "👀") >= 1 })
	d := time.Since(back)
	t.Logf("acknowledged %s after the store came back", d.Round(time.Millisecond))
	if d > 8*time.Second {
		t.Errorf("handled %s after the store came back: the failed claim was waited out", d.Round(time.Millisecond))
	}
	o.handledOnce(dm)
}
