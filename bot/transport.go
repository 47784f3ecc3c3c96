package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Transport is one chat platform. The relay calls Start once, then Post
// and Edit from several goroutines at once; implementations must be safe
// for that.
type Transport interface {
	// Name is the transport's notify name: "slack", "telegram".
	Name() string
	// Start begins intake and returns once it is under way; deliveries go
	// to h until Stop. Acknowledging a delivery to the platform is the
	// transport's job, after a Receiver recorded it (see Receiver).
	Start(ctx context.Context, h Handler) error
	// Stop ends intake; posting keeps working.
	Stop(ctx context.Context) error
	// Post sends m and returns the platform's id of the message.
	Post(ctx context.Context, m Message) (string, error)
	// Edit replaces the message id (posted with m.Channel) with m.
	Edit(ctx context.Context, id string, m Message) error
	// Format is the platform's markup.
	Format() Format
}

// Reactor is the optional transport behaviour of acknowledging a request
// with a reaction instead of a reply.
type Reactor interface {
	React(ctx context.Context, channel, messageID string) error
}

// Concluder is the optional Reactor behaviour of turning the
// acknowledgement reaction into the outcome's once the task ends: ok for
// a task that succeeded.
type Concluder interface {
	Conclude(ctx context.Context, channel, messageID string, ok bool) error
}

// Typer is the optional transport behaviour of showing that the bot is
// at work in a channel ("typing…"). One call shows it for a few seconds
// (TypingLasts); the caller repeats it while the work goes on. A
// transport that has it shows a task's status message only once the task
// takes a while (see bot/relay).
type Typer interface {
	Typing(ctx context.Context, channel string) error
}

// TypingLasts is how long one Typer.Typing call shows: Telegram's chat
// action lasts five seconds, and is repeated a little sooner.
const TypingLasts = 4 * time.Second

// Directory is the optional transport behaviour of naming a user the way
// people in the chat know them: Slack's display or real name, Telegram's
// first name. Each call may be a platform call: callers cache (the relay
// asks at most once per user per hour).
type Directory interface {
	UserName(ctx context.Context, team, user string) (string, error)
}

// Direct is the optional transport behaviour of finding the bot's direct
// conversation with a user, to post there (an approval request copied to
// its approvers, see bot/relay): Slack opens the DM (conversations.open),
// a Telegram user's private chat id is their user id.
type Direct interface {
	DirectChannel(ctx context.Context, team, user string) (string, error)
}

// Members is the optional transport behaviour of telling whether a user
// is a member of a channel or group: an approval request asked in a
// channel one of its approvers is not in also goes to that approver (see
// bot/relay). Slack reads conversations.members (paged; the member list
// is cached a while), Telegram getChatMember (left, kicked or unknown to
// the chat: not a member). An error means the answer is unknown.
type Members interface {
	IsMember(ctx context.Context, channel, team, user string) (bool, error)
}

// Pacer is the optional transport behaviour of asking for a wider spacing
// of writes in some channels than the relay's default (Telegram groups).
type Pacer interface {
	Interval(channel string) time.Duration
}

// Handler receives what a transport takes in.
type Handler interface {
	// HandleMessage handles a message addressed to the bot.
	HandleMessage(ctx context.Context, in Inbound)
	// HandleClick handles a button click and returns the short answer the
	// clicker alone sees ("" for none).
	HandleClick(ctx context.Context, c Click) string
}

// Receiver is the optional Handler behaviour of keeping receipts, the
// one intake contract of every transport (the relay is a Receiver): a
// transport hands a message to Receive before it acknowledges the
// delivery to its platform, and acknowledges it only once Receive has
// recorded it. From then on the record, not the transport, is what makes
// the message handled: Receive returns the handling, which the transport
// runs after acknowledging (nil: nothing to do — not for the bot, handled
// already, or being handled by the node that recorded it), and whatever is
// recorded but not handled to its end (the node died, the handling failed,
// the transport's queue had no room) is the Receiver's to recover. An
// error means nothing was recorded: the transport leaves the delivery
// unacknowledged (Slack's envelope, Telegram's offset, a webhook's non-2xx
// answer) so the platform delivers it again. Clicks are not recorded: the
// store takes a decision once, and a clicker can click again.
type Receiver interface {
	Handler
	Receive(ctx context.Context, in Inbound) (func(context.Context), error)
}

// Receive records in through h when h is a Receiver and returns the
// handling to run once the delivery is acknowledged, with recorded true.
// A Handler that keeps no receipts records nothing (recorded false): its
// handling is HandleMessage, and the transport acknowledges the delivery
// once it has run it (Telegram) or, where the platform will not wait
// (Slack), once it has queued it.
func Receive(ctx context.Context, h Handler, in Inbound) (run func(context.Context), recorded bool, err error) {
	if r, ok := h.(Receiver); ok {
		run, err := r.Receive(ctx, in)
		return run, true, err
	}
	return func(ctx context.Context) { h.HandleMessage(ctx, in) }, false, nil
}

// Message is something to post or an edit of it. Text is markup of the
// transport's Format, already escaped by the caller.
type Message struct {
	Channel string
	Thread  string // reply in this thread (Slack ts; Telegram message id)
	Text    string
	Buttons []Button
}

// Button is one choice under a message; Data is what a click returns.
type Button struct {
	Label string
	Data  string
	Style string // "primary", "danger" or ""
}

// Inbound is a message for the bot, already verified by its transport.
type Inbound struct {
	Transport string
	// EventID identifies the delivery for dedupe: the same event delivered
	// twice has the same EventID.
	EventID   string
	Team      string // Slack team id; "" elsewhere
	User      string // the platform's immutable user id
	Channel   string // channel or chat id
	Thread    string // the thread the message belongs to ("" when it starts one)
	MessageID string // the message itself (a new thread's root)
	Text      string // the bot's mention removed
	// Name is the sender's name when the delivery carries it (Telegram's
	// first name), "" otherwise.
	Name string `json:",omitempty"`
	DM   bool
	// Addressed is true for a mention, a DM, a command or a reply to the
	// bot; a plain reply in a thread is not, and matters only when the
	// thread is a task's home.
	Addressed bool
}

// Requester is the principal id of the sender: "slack:T/U" or
// "telegram:<id>".
func (in Inbound) Requester() string { return Principal(in.Transport, in.Team, in.User) }

// Home is the thread the message belongs to, or the one it starts.
func (in Inbound) Home() string {
	if in.Thread != "" {
		return in.Thread
	}
	return in.MessageID
}

// Click is a button press.
type Click struct {
	Transport string
	EventID   string
	Team      string
	User      string
	Channel   string // where the clicked message is
	MessageID string
	Data      string
	Name      string // the clicker's name when the platform sends it (Telegram)
}

// Requester is the clicker's principal id.
func (c Click) Requester() string { return Principal(c.Transport, c.Team, c.User) }

// ParsePrincipal splits a chat principal id made by Principal; ok is
// false for any other principal (an API token's, a CLI user's).
func ParsePrincipal(p string) (transport, team, user string, ok bool) {
	transport, rest, found := strings.Cut(p, ":")
	if !found || rest == "" {
		return "", "", "", false
	}
	switch transport {
	case "slack":
		team, user, found = strings.Cut(rest, "/")
		return transport, team, user, found && user != ""
	case "telegram":
		return transport, "", rest, true
	}
	return "", "", "", false
}

// Principal is the principal id of a chat user. Slack ids are only unique
// within a workspace, so the team is part of the id.
func Principal(transport, team, user string) string {
	if transport == "slack" {
		return "slack:" + team + "/" + user
	}
	return transport + ":" + user
}

// RateLimitError is a platform's "too many requests": retry after
// RetryAfter.
type RateLimitError struct{ RetryAfter time.Duration }

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("bot: rate limited; retry after %s", e.RetryAfter)
}

// RetryAfter reports how long err asks to wait, if it is a RateLimitError.
func RetryAfter(err error) (time.Duration, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	return 0, false
}
