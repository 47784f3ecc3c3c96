package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"reasonix/bot"
	"reasonix/internal/backoff"
	"reasonix/internal/intakebudget"
)

// Config configures a Transport.
type Config struct {
	BotToken string // xoxb-…, required
	AppToken string // xapp-…, required for Socket Mode
	// SigningSecret, when set instead of AppToken, selects HTTP mode:
	// Slack posts to Handler and nothing connects out.
	SigningSecret string
	// APIURL is the Web API base, "https://slack.com/api/" when empty.
	APIURL string
	// AckReaction is the emoji a taken request gets; default "eyes".
	AckReaction string
	// SlashCommand is the app's slash command; default "/reasonix". A
	// slash payload naming another command is ignored.
	SlashCommand string
	// Workers bound how many deliveries are handled at once; default 8.
	Workers int
	// AckWithin bounds the wait before a delivery is acknowledged: an
	// event's recording in the store (one not recorded by then is left
	// for Slack to retry), a click's or a command's handling (one still
	// being handled is acknowledged at the bound; see deliver.go).
	// Default 2s, inside Slack's 3 s with a margin for the network.
	AckWithin time.Duration
	// QueueSize bounds the deliveries waiting for a worker; default 1024.
	QueueSize int
	// QueueWait is how long a click or a command waits for room in a
	// full queue (never past AckWithin). One that gets none is refused:
	// left unacknowledged in Socket Mode, answered 503 in HTTP mode (Slack
	// tells the user it failed). An event recorded by the relay waits for
	// no room: it is acknowledged, and one the queue cannot take is left
	// to the relay's recovery pass. Default 2s.
	QueueWait time.Duration
	Logger    *slog.Logger
	// IntakeBudget bounds the bytes that HTTP-mode request bodies hold
	// before their signature is checked, shared with the service's other
	// unauthenticated intakes; nil means one of its own.
	IntakeBudget *intakebudget.Budget
}

// Transport is Slack over Socket Mode and the Web API.
type Transport struct {
	cfg     Config
	api     *slack.Client
	sm      *socketmode.Client
	log     *slog.Logger
	botUser string
	botName string

	work   chan func(context.Context)
	h      atomic.Pointer[bot.Handler]
	intake context.Context    // ends when Stop begins
	cancel context.CancelFunc // ends intake
	cut    context.CancelFunc // ends the handlers' context, when Stop gives up
	wg     sync.WaitGroup

	// mu orders Stop after every enqueue in flight: once closed is set no
	// delivery is queued any more, and the workers drain what was.
	mu       sync.RWMutex
	closed   bool
	draining chan struct{}

	members memberCache // see members.go
}

var (
	_ bot.Transport = (*Transport)(nil)
	_ bot.Reactor   = (*Transport)(nil)
	_ bot.Directory = (*Transport)(nil)
	_ bot.Concluder = (*Transport)(nil)
)

// New returns a transport that is not started.
func New(cfg Config) (*Transport, error) {
	if cfg.BotToken == "" {
		return nil, errors.New("slack: the bot token is required")
	}
	cfg.AckReaction = cmp.Or(cfg.AckReaction, "eyes")
	cfg.SlashCommand = cmp.Or(cfg.SlashCommand, "/reasonix")
	cfg.Workers = cmp.Or(cfg.Workers, 8)
	cfg.QueueSize = cmp.Or(cfg.QueueSize, 1024)
	cfg.QueueWait = cmp.Or(cfg.QueueWait, 2*time.Second)
	cfg.AckWithin = cmp.Or(cfg.AckWithin, 2*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.IntakeBudget == nil {
		cfg.IntakeBudget = intakebudget.New(0)
	}
	opts := []slack.Option{slack.OptionAppLevelToken(cfg.AppToken)}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.APIURL))
	}
	return &Transport{cfg: cfg, api: slack.New(cfg.BotToken, opts...), log: cfg.Logger}, nil
}

// Name is "slack".
func (*Transport) Name() string { return "slack" }

// Self is the bot's user name as Slack shows it, "@name"; "" before Start
// has returned. For `serve`'s start-up summary.
func (t *Transport) Self() string {
	if t.botName == "" {
		return ""
	}
	return "@" + t.botName
}

// Format is Slack mrkdwn.
func (*Transport) Format() bot.Format { return format{} }

// Start learns the bot's own user id, connects Socket Mode and starts the
// workers. It fails when the bot token is refused.
func (t *Transport) Start(ctx context.Context, h bot.Handler) error {
	auth, err := t.api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack: auth.test: %w", err)
	}
	t.botUser, t.botName = auth.UserID, auth.User
	if t.cfg.AppToken == "" && t.cfg.SigningSecret == "" {
		return errors.New("slack: socket mode needs the app token, http mode the signing secret")
	}
	work, cut := context.WithCancel(ctx)
	ctx, t.cancel = context.WithCancel(work)
	t.intake, t.cut = ctx, cut
	t.work = make(chan func(context.Context), t.cfg.QueueSize)
	t.draining = make(chan struct{})
	for range t.cfg.Workers {
		t.wg.Go(func() { t.serve(work) })
	}
	if t.cfg.AppToken == "" { // HTTP mode: Handler takes deliveries from now on
		t.h.Store(&h)
		return nil
	}
	t.sm = socketmode.New(t.api)
	t.wg.Go(func() { t.connect(ctx) })
	t.wg.Go(func() { t.receive(ctx, h) })
	return nil
}

// handler is the relay's handler once started, nil before.
func (t *Transport) handler() bot.Handler {
	if p := t.h.Load(); p != nil {
		return *p
	}
	return nil
}

// connect keeps Socket Mode connected: the client reconnects by itself
// after a dropped link or a disconnect request; when it gives up, wait
// and start over.
func (t *Transport) connect(ctx context.Context) {
	policy := backoff.Policy{Base: time.Second, Cap: time.Minute}
	for attempt := 0; ctx.Err() == nil; attempt++ {
		err := t.sm.RunContext(ctx)
		if ctx.Err() != nil {
			return
		}
		t.log.Warn("slack: socket mode stopped; reconnecting", "err", err)
		if backoff.Sleep(ctx, policy.Delay(attempt, 0)) != nil {
			return
		}
	}
}

// receive takes each envelope in arrival order. An event is recorded and
// then acknowledged at once, its handling queued (see deliver.go); one
// that cannot be recorded is left unacknowledged, so Slack sends it again
// (with the same event_id, which the relay dedupes). A click or a command
// is queued and acknowledged once handled or at AckWithin; one the queue
// cannot take is left unacknowledged.
func (t *Transport) receive(ctx context.Context, h bot.Handler) {
	for {
		var evt socketmode.Event
		select {
		case <-ctx.Done():
			return
		case evt = <-t.sm.Events:
		}
		if evt.Type == socketmode.EventTypeErrorBadMessage {
			// The library could not parse it, so it was not acknowledged:
			// acknowledge it anyway, or Slack redelivers it forever.
			if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
				var env struct {
					EnvelopeID string `json:"envelope_id"`
				}
				if json.Unmarshal(bad.Message, &env) == nil && env.EnvelopeID != "" {
					t.ack(env.EnvelopeID)
				}
			}
			continue
		}
		req := evt.Request
		if req == nil || req.EnvelopeID == "" {
			continue // hello, connecting, connected, …
		}
		deadline := time.Now().Add(t.cfg.AckWithin)
		if req.Type == socketmode.RequestTypeEventsAPI {
			in, err := parseEvent(req.Payload, t.botUser)
			if err != nil {
				t.ignore(req.Type, err)
				t.ack(req.EnvelopeID) // nothing for us: a redelivery would not change that
				continue
			}
			if t.accept(ctx, h, in, deadline) {
				t.ack(req.EnvelopeID)
			}
			continue
		}
		job := t.job(req, h)
		if job == nil {
			t.ack(req.EnvelopeID)
			continue
		}
		f := t.deliver(ctx, deadline, job)
		if f == nil {
			if ctx.Err() == nil {
				t.log.Warn("slack: intake queue full; leaving the envelope unacknowledged",
					"type", req.Type, "envelope", req.EnvelopeID, "retry_attempt", req.RetryAttempt)
			}
			continue
		}
		env := req.EnvelopeID
		t.wg.Go(func() {
			f.wait(deadline)
			t.ack(env)
		})
	}
}

// job is the handling of a click or a slash command, nil when req is
// neither or cannot be read.
func (t *Transport) job(req *socketmode.Request, h bot.Handler) func(context.Context) {
	switch req.Type {
	case socketmode.RequestTypeSlashCommands:
		in, err := parseSlash(req.Payload, t.cfg.SlashCommand)
		if err != nil {
			t.ignore(req.Type, err)
			return nil
		}
		return func(ctx context.Context) { h.HandleMessage(ctx, in) }
	case socketmode.RequestTypeInteractive:
		c, err := parseInteraction(req.Payload)
		if err != nil {
			t.ignore(req.Type, err)
			return nil
		}
		return func(ctx context.Context) {
			if answer := h.HandleClick(ctx, c); answer != "" {
				t.ephemeral(ctx, c.Channel, c.User, answer)
			}
		}
	}
	return nil
}

// serve runs queued deliveries; once Stop has begun it runs those still
// queued and returns: none taken is left behind unless Stop gives up
// waiting (and then says so; Slack retries those it was not told of).
func (t *Transport) serve(ctx context.Context) {
	for {
		select {
		case fn := <-t.work:
			fn(ctx)
			continue
		case <-t.draining:
		}
		for {
			select {
			case fn := <-t.work:
				if ctx.Err() != nil {
					return
				}
				fn(ctx)
			default:
				return
			}
		}
	}
}

// enqueue hands job to the workers, waiting up to QueueWait (and not past
// deadline) for room in a full queue; false means it was not queued (also
// once Stop has begun).
func (t *Transport) enqueue(ctx context.Context, deadline time.Time, job func(context.Context)) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return false
	}
	select {
	case t.work <- job:
		return true
	default:
	}
	wait := time.NewTimer(min(t.cfg.QueueWait, time.Until(deadline)))
	defer wait.Stop()
	select {
	case t.work <- job:
		return true
	case <-wait.C:
	case <-ctx.Done():
	case <-t.intake.Done():
	}
	return false
}

// ackTimeout bounds an acknowledgement's wait for the socket's writer (it
// waits while the link reconnects); one that late is moot anyway.
const ackTimeout = time.Second

// ack acknowledges an envelope, until Stop begins: after that the link is
// closing and Slack redelivers what it was not told of.
func (t *Transport) ack(envelopeID string) {
	if t.intake.Err() != nil {
		// Stopping: a handler may have returned because Stop cut it
		// short, not because it was done; Slack retries the envelope.
		return
	}
	ctx, cancel := context.WithTimeout(t.intake, ackTimeout)
	defer cancel()
	if err := t.sm.AckCtx(ctx, envelopeID, nil); err != nil && t.intake.Err() == nil {
		t.log.Warn("slack: acknowledging an envelope", "envelope", envelopeID, "err", err)
	}
}

func (t *Transport) ignore(typ string, err error) {
	if !errors.Is(err, errIgnored) {
		t.log.Warn("slack: unreadable payload", "type", typ, "err", err)
	}
}

// Stop closes the Socket Mode connection (HTTP mode refuses requests
// with 503 from now on) and waits for the workers to handle what is
// queued. When ctx ends first, the handlers' context is cut and the
// deliveries still queued are counted in the log.
func (t *Transport) Stop(ctx context.Context) error {
	if t.cancel == nil {
		return nil
	}
	t.cancel() // no more intake; enqueues waiting for room give up
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		close(t.draining)
	}
	t.mu.Unlock()
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
		t.cut()
		return nil
	case <-ctx.Done():
		t.cut()
		if n := len(t.work); n > 0 {
			t.log.Warn("slack: stopped before handling queued deliveries; Slack retries the events among them", "count", n)
		}
		return ctx.Err()
	}
}

// Post sends m; its id is the message's ts.
func (t *Transport) Post(ctx context.Context, m bot.Message) (string, error) {
	opts := msgOptions(m)
	if m.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(m.Thread))
	}
	_, ts, err := t.api.PostMessageContext(ctx, m.Channel, opts...)
	return ts, mapErr(err)
}

// Edit replaces message id in m.Channel.
func (t *Transport) Edit(ctx context.Context, id string, m bot.Message) error {
	_, _, _, err := t.api.UpdateMessageContext(ctx, m.Channel, id, msgOptions(m)...)
	return mapErr(err)
}

var _ bot.Direct = (*Transport)(nil)

// DirectChannel opens (or finds) the bot's DM with user: its D… id. The
// team is implied by the token.
func (t *Transport) DirectChannel(ctx context.Context, _, user string) (string, error) {
	ch, _, _, err := t.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
	if err != nil {
		return "", mapErr(err)
	}
	return ch.ID, nil
}

// React adds the acknowledgement reaction. A reaction already there is
// the acknowledgement of an earlier handling of the same delivery (its
// record lost), not a failure to fall back from.
func (t *Transport) React(ctx context.Context, channel, messageID string) error {
	err := t.api.AddReactionContext(ctx, t.cfg.AckReaction, slack.NewRefToMessage(channel, messageID))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && se.Err == "already_reacted" {
		return nil
	}
	return mapErr(err)
}

// UserName is what the workspace calls user (users.info): the display
// name people chose, else the real name, else the handle. The team is
// implied by the token.
func (t *Transport) UserName(ctx context.Context, _, user string) (string, error) {
	u, err := t.api.GetUserInfoContext(ctx, user)
	if err != nil {
		return "", mapErr(err)
	}
	return cmp.Or(u.Profile.DisplayName, u.Profile.RealName, u.RealName, u.Name), nil
}

// Conclude replaces the acknowledgement reaction with the outcome's:
// white_check_mark or x (and takes the other away, for a continued task
// whose outcome changed). Reactions already there, or already gone, are
// what a repeat finds, not failures.
func (t *Transport) Conclude(ctx context.Context, channel, messageID string, ok bool) error {
	ref := slack.NewRefToMessage(channel, messageID)
	add, drop := "white_check_mark", "x"
	if !ok {
		add, drop = drop, add
	}
	for _, name := range []string{t.cfg.AckReaction, drop} {
		if err := t.api.RemoveReactionContext(ctx, name, ref); err != nil && !slackErr(err, "no_reaction") {
			return mapErr(err)
		}
	}
	if err := t.api.AddReactionContext(ctx, add, ref); err != nil && !slackErr(err, "already_reacted") {
		return mapErr(err)
	}
	return nil
}

func slackErr(err error, code string) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && se.Err == code
}

// ephemeral answers one user; plain text, escaped here.
func (t *Transport) ephemeral(ctx context.Context, channel, user, text string) {
	if _, err := t.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(format{}.Escape(text), false)); err != nil {
		t.log.Warn("slack: ephemeral answer failed", "err", err)
	}
}

// msgOptions renders m as a section block (plus buttons). The text is
// also the notification fallback; every edit sends the blocks whole, so
// an edit without buttons removes them.
func msgOptions(m bot.Message) []slack.MsgOption {
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, m.Text, false, false), nil, nil)}
	if len(m.Buttons) > 0 {
		var els []slack.BlockElement
		for i, b := range m.Buttons {
			btn := slack.NewButtonBlockElement(fmt.Sprintf("reasonix_%d", i), b.Data, slack.NewTextBlockObject(slack.PlainTextType, b.Label, false, false))
			switch b.Style {
			case "primary":
				btn.Style = slack.StylePrimary
			case "danger":
				btn.Style = slack.StyleDanger
			}
			els = append(els, btn)
		}
		blocks = append(blocks, slack.NewActionBlock("reasonix_actions", els...))
	}
	return []slack.MsgOption{slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(blocks...)}
}

func mapErr(err error) error {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return &bot.RateLimitError{RetryAfter: rl.RetryAfter}
	}
	return err
}
