package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"reasonix/config"
	"reasonix/runner/runnertest"
)

// fakeSelf is a started chat transport for the summary.
type fakeSelf struct{ name, self string }

func (f fakeSelf) Name() string { return f.name }
func (f fakeSelf) Self() string { return f.self }

// summaryConfig has a bit of everything the summary names.
func summaryConfig() *config.Config {
	cfg := config.Default()
	for i := range 3 {
		cfg.Workspaces = append(cfg.Workspaces, config.Workspace{Name: fmt.Sprint("ws", i), Repo: "/src/ws", Base: "main"})
		cfg.Webhooks = append(cfg.Webhooks, config.Webhook{Name: fmt.Sprint("hook", i), Kind: "github", Posture: "ask"})
		cfg.Schedules = append(cfg.Schedules, config.Schedule{Name: fmt.Sprint("nightly", i), Cron: "0 3 * * *", Timezone: "Europe/Berlin",
			Prompt: "tidy", Overlap: config.OverlapSkip, CatchUp: config.CatchUpLatest, MaxFailures: 3})
	}
	cfg.Bot.Slack = config.SlackBot{Enabled: true, AllowChannels: []string{"C1", "C2"}, AllowUsers: []string{"*"}}
	cfg.Bot.Telegram = config.TelegramBot{Enabled: true, Mode: config.TelegramWebhook, AllowChats: config.TelegramIDs{"-1"},
		AllowUsers: config.TelegramIDs{"1"}}
	return cfg
}

// TestStartupSummary: serve's summary names the model (or says it is
// missing), workspaces, chats by handle, webhooks, schedules in their own
// zone, the dashboard and how to sign in, and what is missing.
func TestStartupSummary(t *testing.T) {
	cfg := summaryConfig()
	svc := runnertest.Start(t, runnertest.Options{Settings: cfg})
	var b strings.Builder
	startupOf(t.Context(), cfg, svc, "http://127.0.0.1:8080", "sqlite", "/data", "/data/api-token", "",
		[]chatSelf{fakeSelf{"slack", "@reasonix"}, fakeSelf{"telegram", "@rx_bot"}}).write(&b)
	out := b.String()
	for _, want := range []string{
		"reasonix dev serving on http://127.0.0.1:8080 (API token: /data/api-token)\n",
		"  workspaces  ws0: /src/ws (main)\n              ws1:",
		"  chat        Slack connected as @reasonix (Socket Mode; answers in 2 channels, anyone in them)\n",
		"              Telegram connected as @rx_bot (webhook; answers in 1 channel, 1 user)\n",
		"  webhooks    hook0: POST http://127.0.0.1:8080/hooks/hook0 (github, posture ask)\n",
		"  schedules   nightly0: 0 3 * * * Europe/Berlin, next ",
		"  dashboard   http://127.0.0.1:8080/ — sign in with a one-time link from `reasonix login-link`",
		"  missing     a model: add a [[providers]] entry",
		"[serve] public_url: Telegram's webhook is not registered without it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, " 03:00:00 CE") {
		t.Errorf("the schedule's next run is not in its own zone:\n%s", out)
	}
	if !strings.Contains(out, "  model       none\n") {
		t.Errorf("no model should read as none:\n%s", out)
	}
}

// BenchmarkStartupSummary is what the summary adds to serve's start
// (the budget: 5 ms).
func BenchmarkStartupSummary(b *testing.B) {
	cfg := summaryConfig()
	svc := runnertest.Start(b, runnertest.Options{Settings: cfg})
	chats := []chatSelf{fakeSelf{"slack", "@reasonix"}, fakeSelf{"telegram", "@rx_bot"}}
	for b.Loop() {
		startupOf(b.Context(), cfg, svc, "http://127.0.0.1:8080", "sqlite", "/data", "/data/api-token", "", chats).write(io.Discard)
	}
}
