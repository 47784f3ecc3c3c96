package relay

import (
	"context"
	"errors"
	"slices"

	"reasonix/bot"
	"reasonix/config"
	"reasonix/runner"
)

// access is one transport's allow lists, by platform id.
type access struct {
	users, channels []string
}

func accessFor(c config.Bot) map[string]access {
	return map[string]access{
		"slack":    {users: c.Slack.AllowUsers, channels: c.Slack.AllowChannels},
		"telegram": {users: c.Telegram.AllowUsers, channels: c.Telegram.AllowChats},
	}
}

// userAllowed: "*" admits everyone who reached an allowed channel.
func (a access) userAllowed(user string) bool {
	return user != "" && (slices.Contains(a.users, user) || slices.Contains(a.users, "*"))
}

// channelAllowed: a DM is let through here and judged by dmAllowed;
// elsewhere the channel must be listed.
func (a access) channelAllowed(in bot.Inbound) bool {
	return in.DM || slices.Contains(a.channels, in.Channel)
}

// dmAllowed reports whether the bot talks with in's author in a direct
// message: the user is listed by id in allow_users, or the conversation
// itself is listed (a Slack D… channel, a Telegram private chat id). "*"
// is not enough: it admits the members of the allowed channels, and the
// platforms cannot tell cheaply whether a DM's author is one, so under
// "*" alone anyone on the platform could otherwise start tasks.
func (a access) dmAllowed(in bot.Inbound) bool {
	return in.User != "" && (slices.Contains(a.users, in.User) || slices.Contains(a.channels, in.Channel))
}

// principal is the chat user's principal with the role the service
// gives it (see runner.Service.ChatPrincipal).
//
// An id the service does not take for a chat identity (a platform that
// sent no team id) is that id with no role: it may still control its own
// tasks, and decides nothing.
func (r *Relay) principal(ctx context.Context, transport, team, user string) (runner.Principal, error) {
	if user == "" {
		return runner.Principal{}, nil
	}
	id := bot.Principal(transport, team, user)
	p, err := r.svc.ChatPrincipal(ctx, id)
	if errors.Is(err, runner.ErrInvalid) {
		return runner.Principal{ID: id}, nil
	}
	return p, err
}

// mayApprove reports whether a chat user has a role that decides
// approvals at all: a configured approver of the transport, a global
// approver, or a chat identity granted the approve (or admin) role with
// `reasonix roles grant`. Whether they may decide a given approval is
// runner.Service.MayDecide's rule, which Decide applies.
func (r *Relay) mayApprove(ctx context.Context, transport, team, user string) (bool, error) {
	p, err := r.principal(ctx, transport, team, user)
	if err != nil {
		return false, err
	}
	return p.ID != "" && p.MayDecide() == nil, nil
}
