package relay_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/bot/telegram"
	"reasonix/config"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// BenchmarkTelegramQuickAnswer: a question needing no tool, asked in a
// private chat, at the relay's default pacing against a fake Telegram
// enforcing its 1 write/s per chat. Metrics: the model's answer → the
// answer visible in the chat (p50), and → the chat's last message write
// (a status message saying done, where there is one). Each iteration is another person's private
// chat, so iterations share no pacing slot.
//
// Two cases: "quick", the model answering at once, so that the answer is
// the one message; and "after-status", the model taking longer than the
// relay's status delay, so that the status message is up (edited in
// place, typing shown) when the answer comes and must be edited to done
// beside it.
//
//	go test -run '^$' -bench TelegramQuickAnswer -benchtime 10x -count 3 ./bot/relay
func BenchmarkTelegramQuickAnswer(b *testing.B) {
	b.Run("quick", func(b *testing.B) { benchTelegramAnswer(b, 0) })
	b.Run("after-status", func(b *testing.B) { benchTelegramAnswer(b, 3500*time.Millisecond) })
}

// benchTelegramAnswer is BenchmarkTelegramQuickAnswer with a model that
// thinks for think before it answers.
func benchTelegramAnswer(b *testing.B, think time.Duration) {
	var mu sync.Mutex
	answered := map[string]time.Time{} // by answer text
	st := storetest.SQLite(b, store.Config{})
	turns := make([]agenttest.Turn, b.N+5)
	for i := range turns {
		turns[i] = agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
			if think > 0 {
				<-time.After(think) // a model at work, not a wait for the code under test
			}
			q := req.Messages[len(req.Messages)-1].Content
			ans := "answer-" + strings.TrimSpace(q[strings.LastIndex(q, "q")+1:])
			mu.Lock()
			answered[ans] = time.Now()
			mu.Unlock()
			return agenttest.Turn{Text: ans}
		})
	}
	prov := agenttest.NewScriptedProvider(turns...)
	fake := bottest.NewTelegram(b, "42:bench-token", bottest.SlackLimits{PerSecond: 1, Burst: 3})
	tr, err := telegram.New(telegram.Config{Token: "42:bench-token", APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	var users []string
	for i := range b.N {
		users = append(users, strconv.Itoa(5000+i))
	}
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: users}}
	svc := runnertest.Start(b, runnertest.Options{Store: st, Provider: prov, Settings: withBot(nil, cfg)})
	r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr}, ScanInterval: 50 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Stop(ctx)
	})
	var visible, last []time.Duration
	b.ResetTimer()
	for i := range b.N {
		user := int64(5000 + i)
		q := fake.Send(user, user, "what is 2+2? q"+strconv.Itoa(i), 0)
		ans := "answer-" + strconv.Itoa(i)
		var seen, final time.Time
		eventually(b, "the answer and the final status", func() bool {
			seen, final = time.Time{}, time.Time{}
			done := false
			for _, m := range fake.Messages(user) {
				at := m.Posted
				if m.Edited.After(at) {
					at = m.Edited
				}
				if strings.Contains(m.Text, ans) && (seen.IsZero() || at.Before(seen)) {
					seen = at
				}
				if at.After(final) {
					final = at
				}
				done = done || strings.Contains(m.Text, "— done")
			}
			// Without a status message, the end is the question's 👍.
			done = done || fake.Reaction(user, q) == "👍"
			return !seen.IsZero() && done
		})
		mu.Lock()
		at := answered[ans]
		mu.Unlock()
		visible = append(visible, seen.Sub(at))
		last = append(last, final.Sub(at))
	}
	b.StopTimer()
	b.ReportMetric(percentile(visible, 0.5).Seconds()*1000, "answer-p50-ms")
	b.ReportMetric(percentile(last, 0.5).Seconds()*1000, "done-p50-ms")
	b.ReportMetric(float64(fake.Violations()), "violations")
}
