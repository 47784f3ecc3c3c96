package config

import (
	"strings"
	"testing"
)

func TestBotConfigLoads(t *testing.T) {
	f := newFixture(t)
	f.user(`
[[workspaces]]
name = "app"
repo = "/tmp/app"

[bot]
max_posts_per_task = 12

[bot.slack]
enabled = true
bot_token_env = "SLACK_BOT_TOKEN"
app_token_env = "SLACK_APP_TOKEN"
allow_users = ["U1", "*"]
allow_channels = ["C1"]
approvers = ["U2"]

[[bot.routes]]
transport = "slack"
channel = "C1"
workspace = "app"
posture = "auto"
goal = true
`)
	c := f.load()
	if !c.Bot.Slack.Enabled || c.Bot.Slack.SlackMode() != SlackSocket || len(c.Bot.Slack.AllowUsers) != 2 {
		t.Errorf("slack = %+v", c.Bot.Slack)
	}
	if r := c.Bot.Route("slack", "C1"); r == nil || r.Workspace != "app" || r.Posture != "auto" || !r.Goal {
		t.Errorf("route = %+v", r)
	}
	if c.Bot.MaxPostsPerTask != 12 {
		t.Errorf("max_posts_per_task = %d", c.Bot.MaxPostsPerTask)
	}
	if c.Bot.Route("slack", "C2") != nil || c.Bot.Telegram.TelegramMode() != TelegramPoll {
		t.Error("defaults")
	}
}

func TestBotConfigProblemsNameTheirKeys(t *testing.T) {
	f := newFixture(t)
	f.user(`
[bot.slack]
enabled = true
mode = "carrier-pigeon"
allow_channels = ["C1", "*"]
approvers = ["U 2"]
slash_command = "reasonix"

[bot.telegram]
enabled = true
token_env = "xoxb-not-a-name"
mode = "webhook"
api_endpoint = "https://example/bot"
webhook_path = "hook"

[bot]
max_posts_per_task = -1
global_approvers = ["slack:U2", "telegram:42"]

[[bot.routes]]
transport = "irc"
workspace = "nope"
`)
	got := f.loadErr()
	wantContains(t, got,
		"bot.slack.mode", "bot.slack.bot_token_env", "bot.slack.allow_users", `bot.slack.allow_channels`, "bot.slack.approvers",
		"bot.telegram.token_env", "bot.telegram.webhook_secret_env", "bot.telegram.api_endpoint", "bot.telegram.webhook_path",
		"bot.telegram.allow_users", "bot.telegram.allow_chats",
		"bot.routes[0].transport", "bot.routes[0].channel", "bot.routes[0].workspace", "bot.max_posts_per_task",
		"bot.slack.slash_command", `bot.global_approvers: "slack:U2"`)
	if strings.Contains(got, "telegram:42") {
		t.Errorf("a valid global approver was refused: %s", got)
	}
}

func TestBotConfigUnknownKeyAndBadPosture(t *testing.T) {
	f := newFixture(t)
	f.user("[bot.slack]\nenabeld = true\n")
	wantContains(t, f.loadErr(), "bot.slack.enabeld")
	f.user("[[bot.routes]]\ntransport = \"slack\"\nchannel = \"C1\"\nposture = \"reckless\"\n")
	wantContains(t, f.loadErr(), "bot.routes.posture", "reckless")
}

// Telegram ids are numbers, so they may be written as TOML integers as
// well as strings; both spellings load as the same id.
func TestTelegramIDsAsIntegersOrStrings(t *testing.T) {
	f := newFixture(t)
	f.user(`
[bot.telegram]
enabled = true
token_env = "TELEGRAM_BOT_TOKEN"
allow_users = [12345, "678", "*"]
allow_chats = [-1001234, "-1005678"]
approvers = [12345]
`)
	c := f.load()
	tg := c.Bot.Telegram
	if strings.Join(tg.AllowUsers, ",") != "12345,678,*" || strings.Join(tg.AllowChats, ",") != "-1001234,-1005678" || strings.Join(tg.Approvers, ",") != "12345" {
		t.Fatalf("telegram = %+v", tg)
	}

	// The integer and the string spelling are the same id.
	g := newFixture(t)
	g.user("[bot.telegram]\nallow_chats = [\"-1001234\"]\n")
	if got := g.load().Bot.Telegram.AllowChats; strings.Join(got, ",") != strings.Join(tg.AllowChats[:1], ",") {
		t.Fatalf("string spelling = %q, integer spelling = %q", got, tg.AllowChats[:1])
	}
}

// A float, a bool or a lone value is still an error that names the key.
func TestTelegramIDsRefuseOtherTypes(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"allow_users", "[1.5]", "float"},
		{"allow_chats", "[true]", "boolean"},
		{"approvers", "[12345, 2.0]", "float"},
		{"allow_users", "12345", "list"},
	} {
		f := newFixture(t)
		f.user("[bot.telegram]\n" + tc.key + " = " + tc.value + "\n")
		wantContains(t, f.loadErr(), "bot.telegram."+tc.key, tc.want)
	}
}
