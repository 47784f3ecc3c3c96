package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSlackManifest: `reasonix slack manifest` prints a manifest Slack
// takes, with the scopes and events the relay needs and Socket Mode on;
// in http mode the request URLs under public_url instead.
func TestSlackManifest(t *testing.T) {
	home := t.TempDir()
	t.Setenv("REASONIX_HOME", home)
	t.Setenv("HOME", home)
	t.Setenv("REASONIX_CONFIG", "")
	type manifest struct {
		Features struct {
			SlashCommands []struct{ Command, URL string } `json:"slash_commands"`
		} `json:"features"`
		OAuth struct {
			Scopes struct{ Bot []string } `json:"scopes"`
		} `json:"oauth_config"`
		Settings struct {
			Events struct {
				BotEvents  []string `json:"bot_events"`
				RequestURL string   `json:"request_url"`
			} `json:"event_subscriptions"`
			Interactivity struct {
				IsEnabled  bool   `json:"is_enabled"`
				RequestURL string `json:"request_url"`
			} `json:"interactivity"`
			SocketMode bool `json:"socket_mode_enabled"`
		} `json:"settings"`
	}
	run := func(toml string) (manifest, string) {
		t.Helper()
		file := filepath.Join(t.TempDir(), "reasonix.toml")
		if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := cliRun("slack", "manifest", "--config", file)
		var m manifest
		if code != exitOK || json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("slack manifest: exit %d\n%s\n%s", code, out, stderr)
		}
		return m, stderr
	}
	m, _ := run("[bot.slack]\nslash_command = \"/rx\"\n")
	for _, scope := range []string{"app_mentions:read", "chat:write", "reactions:write", "users:read", "im:history", "im:write", "channels:history", "commands", "channels:read", "groups:read"} {
		if !slices.Contains(m.OAuth.Scopes.Bot, scope) {
			t.Errorf("scope %s missing: %v", scope, m.OAuth.Scopes.Bot)
		}
	}
	for _, ev := range []string{"app_mention", "message.im", "message.channels"} {
		if !slices.Contains(m.Settings.Events.BotEvents, ev) {
			t.Errorf("event %s missing: %v", ev, m.Settings.Events.BotEvents)
		}
	}
	if !m.Settings.SocketMode || m.Settings.Events.RequestURL != "" || !m.Settings.Interactivity.IsEnabled ||
		len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != "/rx" {
		t.Errorf("socket mode manifest: %+v", m)
	}

	m, note := run("[serve]\npublic_url = \"https://rx.example.org/\"\n[bot.slack]\nmode = \"http\"\n")
	if m.Settings.SocketMode || m.Settings.Events.RequestURL != "https://rx.example.org/slack/events" ||
		m.Settings.Interactivity.RequestURL != "https://rx.example.org/slack/interactions" ||
		m.Features.SlashCommands[0].URL != "https://rx.example.org/slack/commands" || note != "" {
		t.Errorf("http mode manifest: %+v (note %q)", m, note)
	}
	if _, note := run("[bot.slack]\nmode = \"http\"\n"); !strings.Contains(note, "public_url is not set") {
		t.Errorf("http mode without public_url: note %q", note)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil || !strings.Contains(string(readme), "reasonix slack manifest") {
		t.Errorf("the README does not use reasonix slack manifest (%v)", err)
	}
}
