package relay_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
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

// budgetRig is a rig whose task spends its token budget ([runner]
// max_tokens = 100) on its first model call; every later call is cheap
// and answers.
func budgetRig(t *testing.T) *rig {
	var calls atomic.Int64
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Runner.MaxTokens = 100
	return newRigWith(t, set, func(req agenttest.Request) agenttest.Turn {
		if calls.Add(1) == 1 {
			return toolTurn("c1", "read_file", `{"path":"nothing.txt"}`) // 110 tokens
		}
		return agenttest.Turn{Text: "finished after more budget", Usage: agent.Usage{Prompt: 10, Completion: 5}}
	})
}

// budgetCard waits for the card in the thread of mention and checks it.
func (r *rig) budgetCard(t *testing.T, thread string) (bottest.SlackMessage, string) {
	t.Helper()
	card := r.approvalMessage(t, thread)
	if !strings.Contains(card.Text, "Budget reached") || len(card.Buttons) != 3 {
		t.Fatalf("budget card = %+v", card)
	}
	labels := []string{card.Buttons[0].Label, card.Buttons[1].Label, card.Buttons[2].Label}
	if labels[0] != "+ 100 tokens" || labels[1] != "Stop" || labels[2] != "Stop and publish what exists" {
		t.Fatalf("buttons = %q", labels)
	}
	taskID, err := r.st.ThreadTask(context.Background(), "slack", channel, thread)
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, r.svc, taskID, 10*time.Second, store.StateWaitingApproval)
	return card, taskID
}

// TestBudgetCardPlusBudgetCompletes: the task that spent its budget posts
// a card instead of ending; the requester's click is refused, an
// approver's "+ budget" continues it to the end, and the card says who
// gave more.
func TestBudgetCardPlusBudgetCompletes(t *testing.T) {
	r := budgetRig(t)
	mention := r.slack.Mention(alice, channel, "", "read the file")
	card, taskID := r.budgetCard(t, mention.TS)
	r.slack.Click(alice, channel, card.TS, card.Buttons[0].Value)
	eventually(t, "the requester's refusal", func() bool { return len(r.ephemeralFor(alice)) == 1 })
	if got := runnertest.WaitState(t, r.svc, taskID, 10*time.Second, store.StateWaitingApproval); got.State != store.StateWaitingApproval {
		t.Fatalf("after the requester's click: %s", got.State)
	}
	r.slack.Click(bob, channel, card.TS, card.Buttons[0].Value)
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateSucceeded || done.Result.FinalAnswer != "finished after more budget" || done.Result.Tokens.Prompt != 110 {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	eventually(t, "the card to show the decision", func() bool {
		for _, m := range r.slack.Thread(channel, mention.TS) {
			if m.TS == card.TS {
				return len(m.Buttons) == 0 && strings.Contains(m.Text, "More budget given by "+bottest.SlackRealName(bob))
			}
		}
		return false
	})
}

// TestBudgetCardStopEndsExhausted: Stop ends the task as budget_exhausted
// and the card says who stopped it.
func TestBudgetCardStopEndsExhausted(t *testing.T) {
	r := budgetRig(t)
	mention := r.slack.Mention(alice, channel, "", "read the file")
	card, taskID := r.budgetCard(t, mention.TS)
	r.slack.Click(bob, channel, card.TS, card.Buttons[1].Value)
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "token_budget" {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	eventually(t, "the card to say stopped", func() bool {
		for _, m := range r.slack.Thread(channel, mention.TS) {
			if m.TS == card.TS {
				return len(m.Buttons) == 0 && strings.Contains(m.Text, "Stopped by "+bottest.SlackRealName(bob))
			}
		}
		return false
	})
	if a, _ := r.svc.Approvals(context.Background(), runner.ApprovalFilter{TaskID: taskID}); len(a) != 1 || a[0].Decision != runner.Deny {
		t.Fatalf("approvals = %+v", a)
	}
}

// TestBudgetWarningPostedOnce: a run past [runner] budget_warn of its
// token budget says so in its thread, once.
func TestBudgetWarningPostedOnce(t *testing.T) {
	var calls atomic.Int64
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Runner.MaxTokens = 1000
	r := newRigWith(t, set, func(req agenttest.Request) agenttest.Turn {
		if calls.Add(1) == 1 {
			turn := toolTurn("c1", "read_file", `{"path":"nothing.txt"}`)
			turn.Usage = agent.Usage{Prompt: 800, Completion: 50}
			return turn
		}
		return agenttest.Turn{Text: "finished under budget", Usage: agent.Usage{Prompt: 10, Completion: 5}}
	})
	mention := r.slack.Mention(alice, channel, "", "read the file")
	eventually(t, "the final report", func() bool { return strings.Contains(r.threadText(mention.TS), "finished under budget") })
	if n := strings.Count(r.threadText(mention.TS), "85% of the token budget used: 850 of 1000 tokens"); n != 1 {
		t.Fatalf("%d warnings in the thread:\n%s", n, r.threadText(mention.TS))
	}
}

// TestTelegramBudgetCardStop: on Telegram the card carries the
// same three choices; Stop from the fake Telegram ends the task
// budget_exhausted; the card is edited to say so.
func TestTelegramBudgetCardStop(t *testing.T) {
	st := storetest.SQLite(t, store.Config{})
	var calls atomic.Int64
	turns := make([]agenttest.Turn, 10)
	for i := range turns {
		turns[i] = agenttest.Respond(func(req agenttest.Request) agenttest.Turn {
			if calls.Add(1) == 1 {
				return toolTurn("c1", "read_file", `{"path":"nothing.txt"}`) // 110 tokens
			}
			return agenttest.Turn{Text: "not reached", Usage: agent.Usage{Prompt: 10, Completion: 5}}
		})
	}
	prov := agenttest.NewScriptedProvider(turns...)
	fake := bottest.NewTelegram(t, "42:secret-token", bottest.SlackLimits{})
	fake.SetName(tgBob, "Bob")
	tr, err := telegram.New(telegram.Config{Token: "42:secret-token", APIEndpoint: fake.Endpoint(), Cursor: st, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Bot{Telegram: config.TelegramBot{Enabled: true, AllowUsers: []string{"111", "222"},
		AllowChats: []string{"-100"}, Approvers: []string{"111", "222"}}}
	set := withBot(nil, cfg)
	set.Runner.MaxTokens = 100
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: prov, Settings: set})
	r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr},
		Secrets: []string{"42:secret-token"}, EditInterval: 100 * time.Millisecond, ScanInterval: 50 * time.Millisecond})
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
	fake.Send(tgGroup, tgAlice, "@reasonix_bot read the file", 0)
	var card bottest.TelegramMessage
	eventually(t, "the budget card", func() bool {
		for _, m := range fake.Messages(tgGroup) {
			if len(m.Buttons) == 3 && strings.Contains(m.Text, "More budget?") {
				card = m
				return true
			}
		}
		return false
	})
	if card.Buttons[1].Label != "Stop" || !strings.HasSuffix(card.Buttons[2].Value, ":p") {
		t.Fatalf("card buttons = %+v", card.Buttons)
	}
	fake.Click(tgGroup, tgBob, card.ID, card.Buttons[1].Value)
	var taskID string
	eventually(t, "the task to end", func() bool {
		list, _ := svc.Approvals(context.Background(), runner.ApprovalFilter{})
		if len(list) == 1 {
			taskID = list[0].TaskID
		}
		return taskID != ""
	})
	done := runnertest.WaitState(t, svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateBudgetExhausted)
	if done.State != store.StateBudgetExhausted || done.Result.Error != "token_budget" {
		t.Fatalf("task = %s %+v", done.State, done.Result)
	}
	eventually(t, "the card to say stopped", func() bool {
		for _, m := range fake.Messages(tgGroup) {
			if m.ID == card.ID {
				return len(m.Buttons) == 0 && strings.Contains(m.Text, "Stopped by")
			}
		}
		return false
	})
}
