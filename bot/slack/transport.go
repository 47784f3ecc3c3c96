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
	// Workers bound how many deliveries are handled at once; default 8.
	// Envelopes are acknowledged before they queue, so a slow store never
	// makes Slack retry.
	Workers int
	Logger  *slog.Logger
}

// Transport is Slack over Socket Mode and the Web API.
type Transport struct {
	cfg     Config
	api     *slack.Client
	sm      *socketmode.Client
	log     *slog.Logger
	botUser string

	work   chan func(context.Context)
	h      atomic.Pointer[bot.Handler]
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var (
	_ bot.Transport = (*Transport)(nil)
	_ bot.Reactor   = (*Transport)(nil)
)

// New returns a transport that is not started.
func New(cfg Config) (*Transport, error) {
	if cfg.BotToken == "" {
		return nil, errors.New("slack: the bot token is required")
	}
	cfg.AckReaction = cmp.Or(cfg.AckReaction, "eyes")
	cfg.Workers = cmp.Or(cfg.Workers, 8)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts := []slack.Option{slack.OptionAppLevelToken(cfg.AppToken)}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.APIURL))
	}
	return &Transport{cfg: cfg, api: slack.New(cfg.BotToken, opts...), log: cfg.Logger}, nil
}

// Name is "slack".
func (*Transport) Name() string { return "slack" }

// Format is Slack mrkdwn.
func (*Transport) Format() bot.Format { return format{} }

// Start learns the bot's own user id, connects Socket Mode and starts the
// workers. It fails when the bot token is refused.
func (t *Transport) Start(ctx context.Context, h bot.Handler) error {
	auth, err := t.api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack: auth.test: %w", err)
	}
	t.botUser = auth.UserID
	if t.cfg.AppToken == "" && t.cfg.SigningSecret == "" {
		return errors.New("slack: socket mode needs the app token, http mode the signing secret")
	}
	ctx, t.cancel = context.WithCancel(ctx)
	t.work = make(chan func(context.Context), 1024)
	for range t.cfg.Workers {
		t.wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case fn := <-t.work:
					fn(ctx)
				}
			}
		})
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

// receive acknowledges each envelope at once and queues its handling.
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
					_ = t.sm.AckCtx(ctx, env.EnvelopeID, nil)
				}
			}
			continue
		}
		req := evt.Request
		if req == nil || req.EnvelopeID == "" {
			continue // hello, connecting, connected, …
		}
		_ = t.sm.Ack(*req)
		payload := req.Payload
		var job func(context.Context)
		switch req.Type {
		case socketmode.RequestTypeEventsAPI:
			in, err := parseEvent(payload, t.botUser)
			if err != nil {
				t.ignore(req.Type, err)
				continue
			}
			job = func(ctx context.Context) { h.HandleMessage(ctx, in) }
		case socketmode.RequestTypeSlashCommands:
			in, err := parseSlash(payload)
			if err != nil {
				t.ignore(req.Type, err)
				continue
			}
			job = func(ctx context.Context) { h.HandleMessage(ctx, in) }
		case socketmode.RequestTypeInteractive:
			c, err := parseInteraction(payload)
			if err != nil {
				t.ignore(req.Type, err)
				continue
			}
			job = func(ctx context.Context) {
				if answer := h.HandleClick(ctx, c); answer != "" {
					t.ephemeral(ctx, c.Channel, c.User, answer)
				}
			}
		default:
			continue
		}
		select {
		case t.work <- job:
		default:
			t.log.Warn("slack: intake queue full; dropping a delivery", "type", req.Type)
		}
	}
}

func (t *Transport) ignore(typ string, err error) {
	if !errors.Is(err, errIgnored) {
		t.log.Warn("slack: unreadable payload", "type", typ, "err", err)
	}
}

// Stop closes the Socket Mode connection and waits for the workers.
func (t *Transport) Stop(ctx context.Context) error {
	if t.cancel == nil {
		return nil
	}
	t.cancel()
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
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

// React adds the acknowledgement reaction.
func (t *Transport) React(ctx context.Context, channel, messageID string) error {
	return mapErr(t.api.AddReactionContext(ctx, t.cfg.AckReaction, slack.NewRefToMessage(channel, messageID)))
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
