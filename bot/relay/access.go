package relay

import (
	"slices"

	"reasonix/bot"
	"reasonix/config"
)

// access is one transport's allow lists, by platform id.
type access struct {
	users, channels, approvers []string
}

func accessFor(c config.Bot) map[string]access {
	return map[string]access{
		"slack":    {users: c.Slack.AllowUsers, channels: c.Slack.AllowChannels, approvers: c.Slack.Approvers},
		"telegram": {users: c.Telegram.AllowUsers, channels: c.Telegram.AllowChats, approvers: c.Telegram.Approvers},
	}
}

// userAllowed: "*" admits everyone who reached an allowed channel.
func (a access) userAllowed(user string) bool {
	return user != "" && (slices.Contains(a.users, user) || slices.Contains(a.users, "*"))
}

// channelAllowed: a DM is a conversation with one allowed user, so the
// user list governs it; elsewhere the channel must be listed.
func (a access) channelAllowed(in bot.Inbound) bool {
	return in.DM || slices.Contains(a.channels, in.Channel)
}

func (a access) approver(user string) bool { return user != "" && slices.Contains(a.approvers, user) }

// approverPrincipals qualifies the configured approver ids the way the
// runner compares them.
func (a access) approverPrincipals(transport, team string) []string {
	out := make([]string, 0, len(a.approvers))
	for _, u := range a.approvers {
		out = append(out, bot.Principal(transport, team, u))
	}
	return out
}
