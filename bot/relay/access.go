package relay

import (
	"context"
	"errors"
	"slices"

	"reasonix/bot"
	"reasonix/config"
	"reasonix/runner/store"
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

// mayApprove reports whether a chat user may decide approvals: a
// configured approver of the transport, or a chat identity granted the
// approve (or admin) role with `reasonix roles grant`. The role is read at
// each decision, so a revoked role stops working at once. Whether the
// user may decide this approval (not their own task's, still pending) is
// the runner's check.
func (r *Relay) mayApprove(ctx context.Context, transport, team, user string) (bool, error) {
	if r.access[transport].approver(user) {
		return true, nil
	}
	if user == "" {
		return false, nil
	}
	role, err := r.st.RoleOf(ctx, bot.Principal(transport, team, user))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return role.Rank() >= store.RoleApprove.Rank(), nil
}
