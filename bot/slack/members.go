package slack

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"reasonix/bot"
)

var _ bot.Members = (*Transport)(nil)

// Membership is read a whole channel at a time (conversations.members,
// paged) and kept for memberTTL: an approval request asks about each of
// its approvers, and a busy channel asks again and again, while people
// join and leave a channel rarely. A failed read is kept for as long, so
// a bot without the channels:read scope is not asking on every request.
const (
	memberTTL      = 5 * time.Minute
	memberPage     = 200  // members per conversations.members call
	maxMemberPages = 50   // 10,000 members: past that, the answer is unknown
	maxChannels    = 1000 // channels cached at once
)

type memberCache struct {
	mu    sync.Mutex
	known map[string]memberList // by channel
}

type memberList struct {
	users map[string]bool
	err   error
	at    time.Time
}

// IsMember reports whether user is a member of channel.
func (t *Transport) IsMember(ctx context.Context, channel, _, user string) (bool, error) {
	l, err := t.members.get(ctx, channel, func(ctx context.Context) (map[string]bool, error) {
		return t.channelMembers(ctx, channel)
	})
	if err != nil {
		return false, err
	}
	return l[user], nil
}

// channelMembers reads every member of channel, page after page.
func (t *Transport) channelMembers(ctx context.Context, channel string) (map[string]bool, error) {
	users := map[string]bool{}
	cursor := ""
	for range maxMemberPages {
		page, next, err := t.api.GetUsersInConversationContext(ctx, &slack.GetUsersInConversationParameters{
			ChannelID: channel, Cursor: cursor, Limit: memberPage})
		if err != nil {
			return nil, mapErr(err)
		}
		for _, u := range page {
			users[u] = true
		}
		if next == "" {
			return users, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("slack: channel %s has more than %d members", channel, maxMemberPages*memberPage)
}

func (c *memberCache) get(ctx context.Context, channel string, read func(context.Context) (map[string]bool, error)) (map[string]bool, error) {
	c.mu.Lock()
	l, ok := c.known[channel]
	c.mu.Unlock()
	if ok && time.Since(l.at) < memberTTL {
		return l.users, l.err
	}
	users, err := read(ctx)
	if ctx.Err() != nil {
		return nil, err // cut short, not an answer to keep
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil || len(c.known) >= maxChannels {
		c.known = map[string]memberList{}
	}
	c.known[channel] = memberList{users: users, err: err, at: time.Now()}
	return users, err
}
