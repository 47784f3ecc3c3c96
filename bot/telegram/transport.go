package telegram

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"reasonix/bot"
	"reasonix/internal/backoff"
	"reasonix/internal/intakebudget"
)

// Cursor keeps the poll offset across restarts; *store.Store is one.
type Cursor interface {
	ChatCursor(ctx context.Context, key string) (int64, error)
	SetChatCursor(ctx context.Context, key string, value int64) error
}

// PollLease is the lease, in the store the serve nodes share, on polling
// Telegram; *store.Store is one.
type PollLease interface {
	ClaimPollLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	ReleasePollLease(ctx context.Context, name, owner string) error
}

// Config configures a Transport.
type Config struct {
	Token string // required
	// APIEndpoint is the ".../bot%s/%s" template; Telegram's when empty.
	APIEndpoint string
	Cursor      Cursor // required: the offset survives a restart
	// WebhookSecret, when set, selects webhook mode: updates arrive at
	// Handler and nothing polls.
	WebhookSecret string
	// WebhookURL, in webhook mode, is the public URL of Handler: Start
	// registers it with setWebhook, with WebhookSecret as the
	// secret_token. Empty: register it yourself.
	WebhookURL string
	// PollTimeout is the long poll's wait; default 25s.
	PollTimeout time.Duration
	// Lease lets several serve nodes share the bot token: Telegram serves
	// one getUpdates per token at a time, so a node polls only while it
	// holds the lease (Node names it). When the holder dies another node
	// takes over once the lease has run out, from the stored offset. nil:
	// this node always polls. Webhook mode does not use it.
	Lease PollLease
	Node  string
	// LeaseTTL is how long the poll lease lasts unrenewed (renewed every
	// third of it); default 15s.
	LeaseTTL time.Duration
	Workers  int // default 8
	Logger   *slog.Logger
	// IntakeBudget bounds the bytes that webhook request bodies hold while
	// they are read and parsed, shared with the service's other
	// unauthenticated intakes; nil means one of its own.
	IntakeBudget *intakebudget.Budget
}

// Transport is Telegram over long polling.
type Transport struct {
	cfg    Config
	api    *tgbotapi.BotAPI
	httpc  *http.Client
	self   me
	log    *slog.Logger
	ctx    context.Context    // the handlers': cut only when Stop gives up
	cut    context.CancelFunc // ends ctx
	intake context.Context    // polling, webhook intake; ends when Stop begins
	cancel context.CancelFunc // ends intake
	h      atomic.Pointer[bot.Handler]
	// workers holds a slot per handling running, at most Workers.
	workers chan struct{}
	// retry spaces the polls after a failed one, or after a batch with an
	// update the handler could not record.
	retry backoff.Policy
	wg    sync.WaitGroup
	// stopMu orders a webhook request's wg.Add before Stop's wg.Wait: a
	// request that comes after Stop began is refused, not added to a
	// WaitGroup being waited on.
	stopMu   sync.Mutex
	stopping bool

	members memberCache // see members.go
}

var (
	_ bot.Transport = (*Transport)(nil)
	_ bot.Pacer     = (*Transport)(nil)
	_ bot.Directory = (*Transport)(nil)
	_ bot.Reactor   = (*Transport)(nil)
	_ bot.Concluder = (*Transport)(nil)
	_ bot.Typer     = (*Transport)(nil)
)

// ctxClient binds the library's requests, which take no context, to one:
// a call's own, so Stop (or a lost lease) ends a long poll at once and a
// post honours its caller's deadline.
type ctxClient struct {
	c   *http.Client
	ctx func() context.Context
}

func (c ctxClient) Do(r *http.Request) (*http.Response, error) { return c.c.Do(r.WithContext(c.ctx())) }

// New validates cfg; it does not contact Telegram yet.
func New(cfg Config) (*Transport, error) {
	if cfg.Token == "" || cfg.Cursor == nil {
		return nil, errors.New("telegram: the token and a cursor are required")
	}
	if cfg.Lease != nil && strings.TrimSpace(cfg.Node) == "" {
		return nil, errors.New("telegram: a poll lease needs the node's name")
	}
	cfg.APIEndpoint = cmp.Or(cfg.APIEndpoint, tgbotapi.APIEndpoint)
	cfg.PollTimeout = cmp.Or(cfg.PollTimeout, 25*time.Second)
	cfg.Workers = cmp.Or(cfg.Workers, 8)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, 15*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.IntakeBudget == nil {
		cfg.IntakeBudget = intakebudget.New(0)
	}
	return &Transport{cfg: cfg, log: cfg.Logger, ctx: context.Background(), workers: make(chan struct{}, cfg.Workers),
		retry: backoff.Policy{Base: time.Second, Cap: time.Minute}}, nil
}

// Name is "telegram".
func (*Transport) Name() string { return "telegram" }

// Format is Telegram HTML.
func (*Transport) Format() bot.Format { return format{} }

// Interval paces writes: Telegram allows one message a second in a chat
// and twenty a minute in a group (negative chat ids).
func (*Transport) Interval(channel string) time.Duration {
	if strings.HasPrefix(channel, "-") {
		return 3 * time.Second
	}
	return time.Second
}

// Start learns who the bot is (getMe) and starts polling.
func (t *Transport) Start(ctx context.Context, h bot.Handler) error {
	t.httpc = &http.Client{Timeout: t.cfg.PollTimeout + 30*time.Second}
	api, err := tgbotapi.NewBotAPIWithClient(t.cfg.Token, t.cfg.APIEndpoint, ctxClient{c: t.httpc, ctx: func() context.Context { return ctx }})
	if err != nil {
		return fmt.Errorf("telegram: getMe: %s", redactToken(err.Error(), t.cfg.Token))
	}
	t.api, t.self = api, me{ID: api.Self.ID, Username: api.Self.UserName}
	t.ctx, t.cut = context.WithCancel(ctx)
	intake, cancel := context.WithCancel(t.ctx)
	t.intake, t.cancel = intake, cancel
	if t.cfg.WebhookSecret != "" {
		t.h.Store(&h)
		if t.cfg.WebhookURL != "" {
			t.wg.Go(func() { t.registerWebhook(intake) })
		}
		return nil
	}
	t.wg.Go(func() { t.poll(intake, h) })
	return nil
}

func (t *Transport) handlerLoaded() bot.Handler {
	if p := t.h.Load(); p != nil {
		return *p
	}
	return nil
}

// Stop ends polling at once (a long poll in flight is cut) and waits for
// the batch being handled, so its offset is saved and the poll lease given
// up after it; when ctx ends first, the handlers' context is cut.
// Posting keeps working.
func (t *Transport) Stop(ctx context.Context) error {
	if t.cancel == nil {
		return nil
	}
	t.stopMu.Lock()
	t.stopping = true
	t.stopMu.Unlock()
	t.cancel()
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	defer t.cut()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

const (
	offsetKey = "telegram:offset"
	// leaseName is the poll lease's name in the store.
	leaseName = "telegram"
)

// pollLease is the poll lease as this node sees it.
type pollLease struct {
	l    PollLease
	node string
}

func (p pollLease) Claim(ctx context.Context, ttl time.Duration) (bool, error) {
	return p.l.ClaimPollLease(ctx, leaseName, p.node, ttl)
}

func (p pollLease) Release(ctx context.Context) error {
	return p.l.ReleasePollLease(ctx, leaseName, p.node)
}

// poll polls for as long as intake lasts: always on its own, and with a
// lease only while this node holds it, trying again every third of its
// ttl.
func (t *Transport) poll(ctx context.Context, h bot.Handler) {
	if t.cfg.Lease == nil {
		t.pollHeld(ctx, h)
		return
	}
	lease := pollLease{l: t.cfg.Lease, node: t.cfg.Node}
	for ctx.Err() == nil {
		err := bot.Hold(ctx, lease, t.cfg.LeaseTTL, t.log, "telegram polling", func(held context.Context) error {
			t.log.Info("telegram: this node polls", "node", t.cfg.Node)
			t.pollHeld(held, h)
			return nil
		})
		if err != nil && !errors.Is(err, bot.ErrLeaseHeld) && ctx.Err() == nil {
			t.log.Warn("telegram: claiming the poll lease", "err", err)
		}
		if backoff.Sleep(ctx, t.cfg.LeaseTTL/3) != nil {
			return
		}
	}
}

// pollHeld fetches updates from the stored offset while held lasts, has
// the handler record a batch (see bot.Receiver), moves the offset past the
// updates recorded — the next poll acknowledges them to Telegram — and
// hands their handling to the workers. An update that could not be recorded (the store failed)
// stops the offset there, so the next poll fetches it again with those
// after it (which the receipts drop); the poller backs off first, so an
// outage is not polled in a loop. A batch fetched is handled to its end
// (under the handlers' context, Stop waiting for it) even when Stop
// begins or the lease is lost meanwhile; the next holder may fetch it
// again if the offset had not moved yet, and the receipts drop what was
// recorded. Nothing is skipped: the offset only ever moves past recorded updates, and a
// recorded one whose handling dies with this node is the relay's to
// recover.
func (t *Transport) pollHeld(held context.Context, h bot.Handler) {
	ctx := t.ctx
	failures := 0
	for held.Err() == nil {
		offset, err := t.cfg.Cursor.ChatCursor(held, offsetKey)
		var raws []json.RawMessage
		if err == nil {
			raws, err = t.getUpdates(held, offset)
		}
		if err != nil {
			if held.Err() != nil {
				return
			}
			d, _ := bot.RetryAfter(err)
			var te *tgbotapi.Error
			if errors.As(err, &te) && te.Code == http.StatusConflict {
				t.log.Warn("telegram: another getUpdates with this token conflicts: another process polls it (give every node the same store), or a webhook is set", "err", te.Message)
			} else {
				t.log.Warn("telegram: polling failed; retrying", "err", redactToken(err.Error(), t.cfg.Token))
			}
			if backoff.Sleep(held, t.retry.Delay(failures, d)) != nil {
				return
			}
			failures++
			continue
		}
		next, left, runs := t.receiveBatch(ctx, h, offset, raws)
		if next > offset && ctx.Err() == nil {
			if err := t.cfg.Cursor.SetChatCursor(ctx, offsetKey, next); err != nil && ctx.Err() == nil {
				t.log.Warn("telegram: saving the offset", "err", err)
			}
		}
		t.dispatch(ctx, runs)
		if left == 0 || ctx.Err() != nil {
			failures = 0
			continue
		}
		t.log.Warn("telegram: updates not recorded (the store failed); fetching them again", "updates", left, "from", next)
		if backoff.Sleep(held, t.retry.Delay(failures, 0)) != nil {
			return
		}
		failures++
	}
}

// receiveBatch has h record the messages of one poll, up to Workers at a
// time, and returns the offset past the longest run of updates, from the
// first, that are recorded (or need no record), how many were not, and
// the handlings to run once the offset is saved. Unreadable and ignored
// updates count as done: fetching them again would not help; a click
// needs no record. A handler that keeps no receipts handles each message
// here, before the offset moves past it.
func (t *Transport) receiveBatch(ctx context.Context, h bot.Handler, offset int64, raws []json.RawMessage) (next int64, left int, runs []func(context.Context)) {
	ids := make([]int64, len(raws))
	done := make([]bool, len(raws))
	all := make([]func(context.Context), len(raws))
	sem := make(chan struct{}, t.cfg.Workers)
	var batch sync.WaitGroup
	for i, raw := range raws {
		p, err := parseUpdate(raw, t.self)
		ids[i] = p.UpdateID
		switch {
		case err != nil:
			if !errors.Is(err, errIgnored) {
				t.log.Warn("telegram: unreadable update", "err", err)
			}
			done[i] = true
		case p.Click != nil:
			done[i], all[i] = true, func(ctx context.Context) { t.click(ctx, h, p) }
		default:
			sem <- struct{}{}
			batch.Go(func() {
				defer func() { <-sem }()
				run, recorded, err := bot.Receive(ctx, h, *p.In)
				switch {
				case err != nil:
					t.log.Warn("telegram: recording an update failed; leaving it for Telegram to send again", "update", p.UpdateID, "err", err)
					return
				case !recorded:
					run(ctx) // no receipt: the offset moves past it once handled
					run = nil
				}
				done[i], all[i] = true, run
			})
		}
	}
	batch.Wait()
	next = offset
	for i, id := range ids { // Telegram returns updates in ascending order
		switch {
		case !done[i] && left == 0:
			next = max(next, id) // fetched again from here
			left++
		case !done[i]:
			left++
		case left == 0:
			next = max(next, id+1)
		}
		if all[i] != nil {
			runs = append(runs, all[i])
		}
	}
	return next, left, runs
}

// dispatch runs the handlings of a batch on the workers, waiting for one
// to be free when all are busy, and does not wait for them to end: the
// next poll, which acknowledges the batch to Telegram, goes out while
// they run. Stop waits for them. Should the handlers' context end first
// (Stop gave up), the rest are not started: they are recorded, and the
// relay recovers them.
func (t *Transport) dispatch(ctx context.Context, runs []func(context.Context)) {
	for _, run := range runs {
		select {
		case t.workers <- struct{}{}:
		case <-ctx.Done():
			return
		}
		t.wg.Go(func() {
			defer func() { <-t.workers }()
			run(ctx)
		})
	}
}

// click hands a button press to h and answers it with h's answer, which
// the clicker alone sees.
func (t *Transport) click(ctx context.Context, h bot.Handler, p parsed) {
	answer := h.HandleClick(ctx, *p.Click)
	params := tgbotapi.Params{"callback_query_id": p.CallbackID}
	if answer != "" {
		params["text"] = answer
		params["show_alert"] = "true"
	}
	if _, err := t.call(ctx, "answerCallbackQuery", params); err != nil {
		t.log.Warn("telegram: answering a click", "err", err)
	}
}

// getUpdates long-polls from offset; ctx cuts the poll (Stop, or the lease
// lost).
func (t *Transport) getUpdates(ctx context.Context, offset int64) ([]json.RawMessage, error) {
	resp, err := t.call(ctx, "getUpdates", tgbotapi.Params{
		"offset": strconv.FormatInt(offset, 10), "timeout": strconv.Itoa(int(t.cfg.PollTimeout / time.Second)),
		"allowed_updates": `["message","callback_query"]`,
	})
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(resp.Result, &raws); err != nil {
		return nil, fmt.Errorf("telegram: getUpdates result: %w", err)
	}
	return raws, nil
}

// call makes a raw method call bound to ctx and maps "too many requests".
// The library's requests take no context, so each call gets a client of
// its own that puts ctx on them.
func (t *Transport) call(ctx context.Context, method string, params tgbotapi.Params) (*tgbotapi.APIResponse, error) {
	api := &tgbotapi.BotAPI{Token: t.cfg.Token, Self: t.api.Self, Buffer: 100,
		Client: ctxClient{c: t.httpc, ctx: func() context.Context { return ctx }}}
	api.SetAPIEndpoint(t.cfg.APIEndpoint)
	resp, err := api.MakeRequest(method, params)
	var te *tgbotapi.Error
	switch {
	case errors.As(err, &te) && te.Code == http.StatusTooManyRequests:
		return resp, &bot.RateLimitError{RetryAfter: time.Duration(max(te.RetryAfter, 1)) * time.Second}
	case errors.As(err, &te):
		return resp, te // Telegram's own description: no token in it
	case err != nil:
		// Transport errors quote the request URL, which holds the token.
		return resp, errors.New(redactToken(err.Error(), t.cfg.Token))
	}
	return resp, nil
}

// Self is the bot's username, "@name"; "" before Start has returned. For
// `serve`'s start-up summary.
func (t *Transport) Self() string {
	if t.self.Username == "" {
		return ""
	}
	return "@" + t.self.Username
}

// UserName is the user's first name (getChat on the user's private chat
// id, which is the user id). A message carries its sender's first name
// too (Inbound.Name), so this is asked only for people the relay has not
// heard from, such as an approver named in an approval.
func (t *Transport) UserName(ctx context.Context, _, user string) (string, error) {
	resp, err := t.call(ctx, "getChat", tgbotapi.Params{"chat_id": user})
	if err != nil {
		return "", err
	}
	var c struct {
		FirstName string `json:"first_name"`
		Username  string `json:"username"`
	}
	if err := json.Unmarshal(resp.Result, &c); err != nil {
		return "", fmt.Errorf("telegram: getChat result: %w", err)
	}
	return cmp.Or(c.FirstName, c.Username), nil
}

var _ bot.Direct = (*Transport)(nil)

// DirectChannel is user's private chat with the bot, whose id is the
// user's. The bot may post there once the user has started it.
func (t *Transport) DirectChannel(_ context.Context, _, user string) (string, error) {
	if _, err := strconv.ParseInt(user, 10, 64); err != nil || strings.HasPrefix(user, "-") {
		return "", fmt.Errorf("telegram: %q is not a user id", user)
	}
	return user, nil
}

// React acknowledges a request with 👀 (setMessageReaction), instead of
// a reply.
func (t *Transport) React(ctx context.Context, chat, messageID string) error {
	return t.react(ctx, chat, messageID, "👀")
}

// Conclude replaces the acknowledgement with 👍 or 👎: Telegram lets bots
// react only with emoji from a fixed set, which holds neither ✅ nor ❌.
func (t *Transport) Conclude(ctx context.Context, chat, messageID string, ok bool) error {
	if ok {
		return t.react(ctx, chat, messageID, "👍")
	}
	return t.react(ctx, chat, messageID, "👎")
}

// react sets the bot's one reaction on a message, replacing its last.
func (t *Transport) react(ctx context.Context, chat, messageID, emoji string) error {
	r, _ := json.Marshal([]map[string]string{{"type": "emoji", "emoji": emoji}})
	_, err := t.call(ctx, "setMessageReaction", tgbotapi.Params{"chat_id": chat, "message_id": messageID, "reaction": string(r)})
	return err
}

// Typing shows "typing…" in chat for about five seconds.
func (t *Transport) Typing(ctx context.Context, chat string) error {
	_, err := t.call(ctx, "sendChatAction", tgbotapi.Params{"chat_id": chat, "action": "typing"})
	return err
}

// Post sends m as HTML, as a reply to m.Thread.
func (t *Transport) Post(ctx context.Context, m bot.Message) (string, error) {
	params := t.messageParams(m)
	if m.Thread != "" {
		params["reply_to_message_id"] = m.Thread
		params["allow_sending_without_reply"] = "true"
	}
	resp, err := t.withPlainFallback(ctx, "sendMessage", params)
	if err != nil {
		return "", err
	}
	var sent struct {
		MessageID int64 `json:"message_id"`
	}
	if err := json.Unmarshal(resp.Result, &sent); err != nil || sent.MessageID == 0 {
		return "", fmt.Errorf("telegram: sendMessage result: %v", err)
	}
	return strconv.FormatInt(sent.MessageID, 10), nil
}

// Edit replaces the text (and buttons) of message id.
func (t *Transport) Edit(ctx context.Context, id string, m bot.Message) error {
	params := t.messageParams(m)
	params["message_id"] = id
	if _, ok := params["reply_markup"]; !ok {
		params["reply_markup"] = `{"inline_keyboard":[]}` // an edit without buttons removes them
	}
	_, err := t.withPlainFallback(ctx, "editMessageText", params)
	var te *tgbotapi.Error
	if errors.As(err, &te) && strings.Contains(te.Message, "message is not modified") {
		return nil
	}
	return err
}

func (t *Transport) messageParams(m bot.Message) tgbotapi.Params {
	params := tgbotapi.Params{"chat_id": m.Channel, "text": m.Text, "parse_mode": "HTML", "disable_web_page_preview": "true"}
	if len(m.Buttons) > 0 {
		row := make([]map[string]string, 0, len(m.Buttons))
		for _, b := range m.Buttons {
			row = append(row, map[string]string{"text": b.Label, "callback_data": b.Data})
		}
		kb, _ := json.Marshal(map[string]any{"inline_keyboard": [][]map[string]string{row}})
		params["reply_markup"] = string(kb)
	}
	return params
}

var tags = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`</?(b|pre)>`) })

// withPlainFallback retries a message Telegram could not parse (a split
// that cut an HTML tag pair) as plain text: the words still arrive.
func (t *Transport) withPlainFallback(ctx context.Context, method string, params tgbotapi.Params) (*tgbotapi.APIResponse, error) {
	resp, err := t.call(ctx, method, params)
	var te *tgbotapi.Error
	if errors.As(err, &te) && te.Code == http.StatusBadRequest && strings.Contains(te.Message, "can't parse entities") {
		params["text"] = html.UnescapeString(tags().ReplaceAllString(params["text"], ""))
		delete(params, "parse_mode")
		return t.call(ctx, method, params)
	}
	return resp, err
}

// redactToken keeps the bot token, which is part of every request URL,
// out of errors.
func redactToken(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "[token]")
}
