package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"reasonix/config"
	"reasonix/internal/secretenv"
	"reasonix/runner"
)

// startup is what `serve` says once it listens: what it serves, what is
// active, and what is missing, so a person sees at a glance whether the
// service is set up as they meant. Each field is a list of lines.
type startup struct {
	Serving    string // "reasonix dev serving on http://… (API token: …)"
	Model      []string
	Workspaces []string
	Chat       []string
	Webhooks   []string
	Schedules  []string
	Dashboard  []string
	Node       []string
	Missing    []string
}

// write prints the summary: the serving line, then one labelled block per
// part; an empty part says "none".
func (s startup) write(w io.Writer) {
	var b strings.Builder
	b.WriteString(s.Serving + "\n")
	for _, part := range []struct {
		label string
		lines []string
	}{
		{"model", s.Model}, {"workspaces", s.Workspaces}, {"chat", s.Chat}, {"webhooks", s.Webhooks},
		{"schedules", s.Schedules}, {"dashboard", s.Dashboard}, {"node", s.Node}, {"missing", s.Missing},
	} {
		lines := part.lines
		if len(lines) == 0 {
			if part.label == "missing" {
				continue // nothing missing: no line
			}
			lines = []string{"none"}
		}
		for i, l := range lines {
			label := ""
			if i == 0 {
				label = part.label
			}
			fmt.Fprintf(&b, "  %-11s %s\n", label, l)
		}
	}
	io.WriteString(w, b.String())
}

// chatSelf is a chat transport that knows its own handle once started
// (bot/slack, bot/telegram).
type chatSelf interface {
	Name() string
	Self() string
}

// startupOf gathers the summary of a started service: cfg as loaded, the
// address it listens on (url), the started chat transports, and the
// sandbox's warning, if any.
func startupOf(ctx context.Context, cfg *config.Config, svc *runner.Service, url, storeDriver, dataDir, tokenSource, sandboxWarning string, chats []chatSelf) startup {
	s := startup{Serving: fmt.Sprintf("reasonix %s serving on %s (API token: %s)", version, url, tokenSource)}
	ref, err := cfg.ResolveModel("")
	switch {
	case err != nil:
		s.Missing = append(s.Missing, "a model: add a [[providers]] entry (`reasonix init` writes one); tasks fail until then")
	case ref.APIKeyEnv != "" && strings.TrimSpace(secretenv.Getenv(ref.APIKeyEnv)) == "":
		s.Model = append(s.Model, ref.Name+"/"+ref.Model)
		s.Missing = append(s.Missing, "the model's API key: $"+ref.APIKeyEnv+" is not set; tasks fail until it is")
	default:
		s.Model = append(s.Model, ref.Name+"/"+ref.Model)
	}
	for _, ws := range cfg.Workspaces {
		s.Workspaces = append(s.Workspaces, fmt.Sprintf("%s: %s (%s)", ws.Name, ws.Repo, ws.Base))
	}
	for _, c := range chats {
		s.Chat = append(s.Chat, chatLine(cfg.Bot, c))
	}
	public := cfg.Serve.BaseURL()
	if tg := cfg.Bot.Telegram; tg.Enabled && tg.TelegramMode() == config.TelegramWebhook && public == "" {
		s.Missing = append(s.Missing, "[serve] public_url: Telegram's webhook is not registered without it; register it yourself or set it")
	}
	base := cmpString(public, url)
	for _, h := range cfg.Webhooks {
		s.Webhooks = append(s.Webhooks, fmt.Sprintf("%s: POST %s/hooks/%s (%s, posture %s)", h.Name, base, h.Name, h.Kind, h.Posture))
	}
	if list, err := svc.Schedules(ctx); err == nil {
		for _, sc := range list {
			line := fmt.Sprintf("%s: %s %s", sc.Name, sc.Cron, cmpString(sc.Timezone, "UTC"))
			switch {
			case !sc.Enabled:
				line += ", disabled"
			case sc.Paused:
				line += ", paused"
				if sc.PausedReason != "" {
					line += " (" + sc.PausedReason + ")"
				}
			case !sc.Next.IsZero():
				next := sc.Next
				line += ", next " + inZone(&next, sc.Timezone)
			}
			s.Schedules = append(s.Schedules, line)
		}
	}
	s.Dashboard = []string{base + "/ — sign in with a one-time link from `reasonix login-link`, or an API token"}
	s.Node = []string{fmt.Sprintf("%s, %s store, data in %s", svc.Node(), storeDriver, dataDir)}
	if sandboxWarning != "" {
		s.Missing = append(s.Missing, "a bash sandbox: "+sandboxWarning)
	}
	if len(chats) == 0 && len(cfg.Webhooks) == 0 && len(cfg.Schedules) == 0 {
		s.Missing = append(s.Missing, "an intake besides the API: enable [bot.slack] or [bot.telegram], or add [[webhooks]] or [[schedules]]")
	}
	return s
}

// chatLine says which chat a transport is connected to and where it
// listens: "Slack connected as @reasonix (Socket Mode; 2 channels, 3 users)".
func chatLine(b config.Bot, c chatSelf) string {
	name, mode, users, where := c.Name(), "", []string(nil), []string(nil)
	switch c.Name() {
	case "slack":
		name, mode, users, where = "Slack", "Socket Mode", b.Slack.AllowUsers, b.Slack.AllowChannels
		if b.Slack.SlackMode() == config.SlackHTTP {
			mode = "Events API over HTTP"
		}
	case "telegram":
		name, mode, users, where = "Telegram", "long polling", []string(b.Telegram.AllowUsers), []string(b.Telegram.AllowChats)
		if b.Telegram.TelegramMode() == config.TelegramWebhook {
			mode = "webhook"
		}
	}
	who := count(len(users), "user")
	for _, u := range users {
		if u == "*" {
			who = "anyone in them"
		}
	}
	line := name + " connected"
	if self := c.Self(); self != "" {
		line += " as " + self
	}
	return fmt.Sprintf("%s (%s; answers in %s, %s)", line, mode, count(len(where), "channel"), who)
}

// count is "1 channel", "2 channels".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
