package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"reasonix/config"
)

// The Slack app the relay (bot/slack) needs, in one place: what it is
// delivered and what it calls. `reasonix slack manifest` prints it as an
// app manifest (https://api.slack.com/reference/manifests), so that
// setting up Slack is pasting one document rather than ticking boxes.
var (
	// slackBotScopes: app_mention and the message events need the read
	// scopes; chat.postMessage, chat.update and chat.postEphemeral
	// chat:write; reactions.add/remove reactions:write; users.info
	// (people by name) users:read; the slash command commands;
	// conversations.open (a copy of a DM's approval request in an
	// approver's DM) im:write; conversations.members (is an approver in
	// the channel a request is asked in?) channels:read and groups:read.
	slackBotScopes = []string{"app_mentions:read", "channels:history", "channels:read", "chat:write", "commands", "groups:history",
		"groups:read", "im:history", "im:write", "reactions:write", "users:read"}
	// slackBotEvents: a mention starts a task; a DM is addressed to the
	// bot; a reply in a task's thread (public or private channel) steers
	// or continues it.
	slackBotEvents = []string{"app_mention", "message.channels", "message.groups", "message.im"}
)

// slackManifestFlags is `reasonix slack manifest [--name NAME]`.
func slackManifestFlags(fs *flag.FlagSet) action {
	file := configFileFlag(fs)
	name := fs.String("name", "Reasonix", "the app's `name` in Slack")
	return func(_ []string, stdout, stderr io.Writer) error {
		cfg, err := loadConfig(*file, false)
		if err != nil {
			return err
		}
		m, note := slackManifest(cfg.Bot.Slack, cfg.Serve.PublicURL, *name)
		if note != "" {
			fmt.Fprintln(stderr, note)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(m)
	}
}

// slackManifest is the app manifest for s: Socket Mode, or (mode "http")
// the request URLs under publicURL. note says what to fill in by hand, if
// anything.
func slackManifest(s config.SlackBot, publicURL, name string) (manifest map[string]any, note string) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "Reasonix"
	}
	http := s.SlackMode() == config.SlackHTTP
	base := strings.TrimRight(publicURL, "/")
	if http && base == "" {
		base = "https://reasonix.example.com"
		note = "note: [serve] public_url is not set; replace https://reasonix.example.com in the manifest with the service's public address"
	}
	slash := map[string]any{"command": s.Slash(), "description": "Hand " + name + " a task, or ask for help",
		"usage_hint": "fix the flaky test | help", "should_escape": false}
	events := map[string]any{"bot_events": slackBotEvents}
	interactivity := map[string]any{"is_enabled": true}
	if http {
		slash["url"] = base + "/slack/commands"
		events["request_url"] = base + "/slack/events"
		interactivity["request_url"] = base + "/slack/interactions"
	}
	botName := strings.ToLower(strings.Join(strings.Fields(name), "-"))
	return map[string]any{
		"display_information": map[string]any{"name": name,
			"description": "Runs coding agents on your repositories; asks before anything risky."},
		"features": map[string]any{
			"app_home":       map[string]any{"messages_tab_enabled": true, "messages_tab_read_only_enabled": false},
			"bot_user":       map[string]any{"display_name": botName, "always_online": true},
			"slash_commands": []any{slash},
		},
		"oauth_config": map[string]any{"scopes": map[string]any{"bot": slackBotScopes}},
		"settings": map[string]any{
			"event_subscriptions":    events,
			"interactivity":          interactivity,
			"org_deploy_enabled":     false,
			"socket_mode_enabled":    !http,
			"token_rotation_enabled": false,
		},
	}, note
}
