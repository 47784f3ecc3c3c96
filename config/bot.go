package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"reasonix/internal/posture"
)

// Bot is the [bot] table: the chat relay of `reasonix serve`. Every
// identity in it is an immutable platform id (Slack U…/W…, Telegram numeric
// ids), never a display name, because display names can be changed by
// their owners.
type Bot struct {
	Slack    SlackBot    `toml:"slack"`
	Telegram TelegramBot `toml:"telegram"`
	// Routes give the defaults of tasks started in one channel or chat.
	Routes []BotRoute `toml:"routes"`
	// MaxPostsPerTask caps the messages the relay posts in one task's
	// thread besides its status message (questions, sub-agent reports,
	// report parts); 0 means DefaultMaxPostsPerTask. Once reached the
	// status message is still edited and the final report still posted,
	// its tail kept.
	MaxPostsPerTask int `toml:"max_posts_per_task"`
	// GlobalApprovers are chat principals ("slack:T…/U…",
	// "telegram:<user id>") who may decide approvals of every task,
	// wherever it is relayed — API and webhook tasks included. Any other
	// chat approver decides only approvals of tasks relayed on its own
	// platform (an allowed channel or a direct message).
	GlobalApprovers []string `toml:"global_approvers"`
	// ApprovalsChannel ("slack:C…" or "telegram:<chat id>") receives a
	// copy of every approval request, with its buttons, of a task relayed
	// on that platform where no approver can see it (a direct message with
	// the requester); "" sends the copies to each approver's direct
	// message instead.
	ApprovalsChannel string `toml:"approvals_channel"`
	// AlertsChannel ("slack:C…" or "telegram:<chat id>") also receives
	// the announcements of schedules that paused themselves or keep
	// failing; "" announces them only to the schedule's notify target.
	AlertsChannel string `toml:"alerts_channel"`
	// ApprovalRemind is how often a request without a deadline
	// (approval_ttl = "none") is reminded of, in the task's thread and
	// under each copy, until it is decided or the task cancelled; 0 means
	// DefaultApprovalRemind. A request with a deadline is reminded of once,
	// at half of it, whatever this says.
	ApprovalRemind time.Duration `toml:"approval_remind"`
}

// Remind is ApprovalRemind with its default applied.
func (b Bot) Remind() time.Duration {
	if b.ApprovalRemind <= 0 {
		return DefaultApprovalRemind
	}
	return b.ApprovalRemind
}

// AlertsChannelOf is the alerts channel of transport, "" for none.
func (b Bot) AlertsChannelOf(transport string) string {
	t, ch, ok := strings.Cut(b.AlertsChannel, ":")
	if !ok || t != transport {
		return ""
	}
	return ch
}

// ApprovalsChannelOf is the approvals channel of transport, "" for none.
func (b Bot) ApprovalsChannelOf(transport string) string {
	t, ch, ok := strings.Cut(b.ApprovalsChannel, ":")
	if !ok || t != transport {
		return ""
	}
	return ch
}

// DefaultMaxPostsPerTask is the per-task post cap when none is set.
const DefaultMaxPostsPerTask = 40

// Slack relay modes.
const (
	SlackSocket = "socket" // default: no public endpoint needed
	SlackHTTP   = "http"
)

// Telegram relay modes.
const (
	TelegramPoll    = "poll" // default
	TelegramWebhook = "webhook"
)

// SlackBot is [bot.slack].
type SlackBot struct {
	Enabled bool `toml:"enabled"`
	// BotTokenEnv names the variable holding the xoxb- token (required).
	BotTokenEnv string `toml:"bot_token_env"`
	// AppTokenEnv names the variable holding the xapp- token Socket Mode
	// connects with (required in socket mode).
	AppTokenEnv string `toml:"app_token_env"`
	// Mode is "socket" (default) or "http".
	Mode string `toml:"mode"`
	// SigningSecretEnv names the signing secret's variable (http mode).
	SigningSecretEnv string `toml:"signing_secret_env"`
	// APIURL is the Web API base ("https://slack.com/api/" when empty);
	// set it for proxies and tests.
	APIURL        string   `toml:"api_url"`
	AllowUsers    []string `toml:"allow_users"`
	AllowChannels []string `toml:"allow_channels"`
	Approvers     []string `toml:"approvers"`
	// AckReaction is the emoji name added to a request once it is queued;
	// default "eyes".
	AckReaction string `toml:"ack_reaction"`
	// SlashCommand is the slash command the Slack app declares; default
	// "/reasonix". A slash payload naming another command is ignored.
	SlashCommand string `toml:"slash_command"`
	// MentionApprovers makes an approval request mention (and so notify)
	// the approvers who can decide it; default true. False names them
	// without a notification.
	MentionApprovers *bool `toml:"mention_approvers"`
}

// Mentions reports whether approval requests mention their approvers.
func (s SlackBot) Mentions() bool { return s.MentionApprovers == nil || *s.MentionApprovers }

// DefaultSlashCommand is [bot.slack] slash_command when none is set.
const DefaultSlashCommand = "/reasonix"

// Slash is SlashCommand with its default applied.
func (s SlackBot) Slash() string {
	if s.SlashCommand == "" {
		return DefaultSlashCommand
	}
	return s.SlashCommand
}

// TelegramBot is [bot.telegram].
type TelegramBot struct {
	Enabled          bool        `toml:"enabled"`
	TokenEnv         string      `toml:"token_env"`
	Mode             string      `toml:"mode"` // "poll" (default) or "webhook"
	WebhookSecretEnv string      `toml:"webhook_secret_env"`
	WebhookPath      string      `toml:"webhook_path"` // default "/telegram/webhook"
	APIEndpoint      string      `toml:"api_endpoint"` // the client's ".../bot%s/%s" template
	AllowUsers       TelegramIDs `toml:"allow_users"`
	AllowChats       TelegramIDs `toml:"allow_chats"`
	Approvers        TelegramIDs `toml:"approvers"`
}

// TelegramIDs is a list of Telegram user or chat ids. Telegram's ids are
// numbers, so a list may write them as TOML integers (12345, -1001234) or
// as strings ("12345"); both spellings mean the same id and are kept as
// its decimal string, the form the relay compares with.
type TelegramIDs []string

// UnmarshalTOML takes a list of integers and strings. Anything else (a
// float, a bool, a table) is refused: the decoder adds the key and line.
func (ids *TelegramIDs) UnmarshalTOML(v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("must be a list of Telegram ids, not %s", tomlKind(v))
	}
	out := make(TelegramIDs, 0, len(list))
	for _, e := range list {
		switch x := e.(type) {
		case string:
			out = append(out, x)
		case int64:
			out = append(out, strconv.FormatInt(x, 10))
		default:
			return fmt.Errorf("%v is %s: write a Telegram id as an integer (12345) or a string (\"12345\")", e, tomlKind(e))
		}
	}
	*ids = out
	return nil
}

// tomlKind names a decoded TOML value's type for an error message.
func tomlKind(v any) string {
	switch v.(type) {
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int64:
		return "an integer"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	default:
		return "a date or time"
	}
}

// BotRoute is one [[bot.routes]] entry.
type BotRoute struct {
	Transport string          `toml:"transport"` // "slack" or "telegram"
	Channel   string          `toml:"channel"`   // channel or chat id
	Workspace string          `toml:"workspace"`
	Posture   posture.Posture `toml:"posture"`
	Goal      bool            `toml:"goal"`
	PlanFirst bool            `toml:"plan_first"`
	// ApprovalTTL is how long approval requests of tasks relayed in the
	// channel wait for an answer; 0 means [runner] approval_ttl, NoTTL no deadline.
	ApprovalTTL TTL `toml:"approval_ttl"`
}

// SlackMode is Mode with its default applied.
func (s SlackBot) SlackMode() string {
	if s.Mode == "" {
		return SlackSocket
	}
	return s.Mode
}

// TelegramMode is Mode with its default applied.
func (t TelegramBot) TelegramMode() string {
	if t.Mode == "" {
		return TelegramPoll
	}
	return t.Mode
}

// Route returns the route of channel on transport, or nil.
func (b *Bot) Route(transport, channel string) *BotRoute {
	for i := range b.Routes {
		if b.Routes[i].Transport == transport && b.Routes[i].Channel == channel {
			return &b.Routes[i]
		}
	}
	return nil
}

func (b *Bot) validate(c *Config, p *problems) {
	if b.MaxPostsPerTask != 0 {
		checkRange(p, c.origins["bot.max_posts_per_task"], "bot.max_posts_per_task", b.MaxPostsPerTask, 1, 10000)
	}
	if b.ApprovalRemind != 0 && (b.ApprovalRemind < MinApprovalRemind || b.ApprovalRemind > MaxApprovalRemind) {
		p.add(c.origins["bot.approval_remind"], "bot.approval_remind", "must be a duration from \"1m\" to \"168h\", such as \"4h\" (got %s)", b.ApprovalRemind)
	}
	s, src := &b.Slack, c.origins["bot.slack"]
	checkEnvName(p, src, "bot.slack.bot_token_env", s.BotTokenEnv)
	checkEnvName(p, src, "bot.slack.app_token_env", s.AppTokenEnv)
	checkEnvName(p, src, "bot.slack.signing_secret_env", s.SigningSecretEnv)
	switch s.Mode {
	case "", SlackSocket, SlackHTTP:
	default:
		p.add(src, "bot.slack.mode", "%q is not socket or http", s.Mode)
	}
	checkIDs(p, src, "bot.slack.allow_users", s.AllowUsers, true)
	checkIDs(p, src, "bot.slack.allow_channels", s.AllowChannels, false)
	checkIDs(p, src, "bot.slack.approvers", s.Approvers, false)
	if s.SlashCommand != "" && !slashCommand().MatchString(s.SlashCommand) {
		p.add(src, "bot.slack.slash_command", "%q is not a slash command like /reasonix", s.SlashCommand)
	}
	if s.Enabled {
		need(p, src, "bot.slack.bot_token_env", s.BotTokenEnv)
		if s.SlackMode() == SlackSocket {
			need(p, src, "bot.slack.app_token_env", s.AppTokenEnv)
		} else {
			need(p, src, "bot.slack.signing_secret_env", s.SigningSecretEnv)
		}
		if len(s.AllowUsers) == 0 {
			p.add(src, "bot.slack.allow_users", "is empty: list the Slack user ids (U…) who may start tasks, or \"*\" for everyone in the allowed channels")
		}
		if len(s.AllowChannels) == 0 {
			p.add(src, "bot.slack.allow_channels", "is empty: list the channel ids (C…, D… for DMs) the bot answers in")
		}
	}

	t, tsrc := &b.Telegram, c.origins["bot.telegram"]
	checkEnvName(p, tsrc, "bot.telegram.token_env", t.TokenEnv)
	checkEnvName(p, tsrc, "bot.telegram.webhook_secret_env", t.WebhookSecretEnv)
	switch t.Mode {
	case "", TelegramPoll, TelegramWebhook:
	default:
		p.add(tsrc, "bot.telegram.mode", "%q is not poll or webhook", t.Mode)
	}
	if t.WebhookPath != "" && !strings.HasPrefix(t.WebhookPath, "/") {
		p.add(tsrc, "bot.telegram.webhook_path", "%q must start with /", t.WebhookPath)
	}
	if t.APIEndpoint != "" && strings.Count(t.APIEndpoint, "%s") != 2 {
		p.add(tsrc, "bot.telegram.api_endpoint", "%q must contain two %%s (token, method), like https://api.telegram.org/bot%%s/%%s", t.APIEndpoint)
	}
	checkIDs(p, tsrc, "bot.telegram.allow_users", t.AllowUsers, true)
	checkIDs(p, tsrc, "bot.telegram.allow_chats", t.AllowChats, false)
	checkIDs(p, tsrc, "bot.telegram.approvers", t.Approvers, false)
	if t.Enabled {
		need(p, tsrc, "bot.telegram.token_env", t.TokenEnv)
		if t.TelegramMode() == TelegramWebhook {
			need(p, tsrc, "bot.telegram.webhook_secret_env", t.WebhookSecretEnv)
		}
		if len(t.AllowUsers) == 0 {
			p.add(tsrc, "bot.telegram.allow_users", "is empty: list the numeric Telegram user ids who may start tasks, or \"*\"")
		}
		if len(t.AllowChats) == 0 {
			p.add(tsrc, "bot.telegram.allow_chats", "is empty: list the chat ids the bot answers in")
		}
	}

	for _, id := range b.GlobalApprovers {
		if !chatPrincipal().MatchString(id) {
			p.add(c.origins["bot.global_approvers"], "bot.global_approvers", "%q is not a chat identity: use slack:<team id>/<user id> or telegram:<user id>", id)
		}
	}

	for _, kv := range [][2]string{{"bot.approvals_channel", b.ApprovalsChannel}, {"bot.alerts_channel", b.AlertsChannel}} {
		key, ac := kv[0], kv[1]
		if ac == "" {
			continue
		}
		t, ch, _ := strings.Cut(ac, ":")
		switch {
		case t == "slack" && strings.HasPrefix(ch, "C") || t == "slack" && strings.HasPrefix(ch, "G"):
		case t == "telegram" && strings.HasPrefix(ch, "-") && len(ch) > 1 && strings.Trim(ch[1:], "0123456789") == "":
		default:
			p.add(c.origins[key], key, "%q is not a channel: use slack:<channel id> (C…) or telegram:<group chat id> (-100…)", ac)
		}
	}

	rsrc := c.origins["bot.routes"]
	for i, r := range b.Routes {
		label := fmt.Sprintf("bot.routes[%d]", i)
		if r.Transport != "slack" && r.Transport != "telegram" {
			p.add(rsrc, label+".transport", "%q is not slack or telegram", r.Transport)
		}
		if strings.TrimSpace(r.Channel) == "" {
			p.add(rsrc, label+".channel", "is required")
		}
		if r.Posture != "" {
			if _, err := posture.Parse(string(r.Posture)); err != nil {
				p.add(rsrc, label+".posture", "%v", err)
			}
		}
		checkEntryTTL(p, rsrc, label+".approval_ttl", r.ApprovalTTL)
		if r.Workspace != "" && !c.hasWorkspace(r.Workspace) {
			p.add(rsrc, label+".workspace", "%q is not a [[workspaces]] name", r.Workspace)
		}
	}
}

// slashCommand is the shape Slack accepts for a command name.
var slashCommand = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/[a-z0-9_-]{1,31}$`) })

// chatPrincipal is a chat identity's principal id, the same shape the
// store grants roles to.
var chatPrincipal = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(slack:[A-Z0-9]{1,32}/[A-Z0-9]{1,32}|telegram:-?[0-9]{1,20})$`)
})

func need(p *problems, src, field, v string) {
	if v == "" {
		p.add(src, field, "is required when the transport is enabled")
	}
}

// checkIDs rejects empty entries and, except where "*" is meaningful,
// the wildcard.
func checkIDs(p *problems, src, field string, ids []string, star bool) {
	for _, id := range ids {
		switch {
		case strings.TrimSpace(id) == "" || strings.ContainsAny(id, " \t/"):
			p.add(src, field, "%q is not a platform id", id)
		case id == "*" && !star:
			p.add(src, field, "\"*\" is not accepted here: list ids")
		}
	}
}
