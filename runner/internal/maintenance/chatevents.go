package maintenance

import (
	"context"
	"log/slog"
	"time"
)

// ChatEventRetention is how long the chat relay's record of a platform
// delivery (store chat_events: its dedupe and claim) is kept after its
// last mark. The record only has to outlive the platform's redeliveries:
// Slack retries an event for about an hour at most (after seconds, 1 min
// and 5 min), and Telegram fetches again only updates whose offset was
// not confirmed, minutes later. A week is generous on purpose — a node
// down over a weekend that comes back to a stale Telegram offset still
// finds what it handled — while the table stays bounded.
const ChatEventRetention = 7 * 24 * time.Hour

// ChatEventPruneEvery is how often the leader prunes; the rows age in
// days, so hourly is plenty.
const ChatEventPruneEvery = time.Hour

// chatEventLeaderRetry is how long a pruner that was told it does not
// lead waits before it asks again. A follower would otherwise ask every
// look, for a prune that can wait an hour; a node elected meanwhile
// prunes within a minute.
const chatEventLeaderRetry = time.Minute

// ChatEventStore is what the pruner needs of the store.
type ChatEventStore interface {
	// PruneChatEvents deletes the delivery records last marked before
	// before and returns how many.
	PruneChatEvents(ctx context.Context, before time.Time) (int64, error)
}

// ChatEventPrunerConfig configures a ChatEventPruner.
type ChatEventPrunerConfig struct {
	// Interval is how often the pruner looks at the clock; required. It
	// bounds how late a due prune runs, which matters to a test's clock
	// more than to a real one.
	Interval time.Duration
	// Now is the clock of the retention and of Every; nil is time.Now.
	Now func() time.Time
	// Leads gates a due prune: only the leader prunes; required.
	Leads Leads
	// Retention and Every default to ChatEventRetention and
	// ChatEventPruneEvery.
	Retention time.Duration
	Every     time.Duration
	Log       *slog.Logger
}

// ChatEventPruner deletes chat delivery records older than the retention,
// on the leader, at its first look and every Every after. Between prunes
// a look is a comparison of times: it asks who leads only when a prune is
// due, and a follower asks again only a minute later.
type ChatEventPruner struct {
	cfg  ChatEventPrunerConfig
	st   ChatEventStore
	loop loop
	due  time.Time // the next look that asks and prunes; zero: the first
}

// NewChatEventPruner builds a pruner over st; Start runs it.
func NewChatEventPruner(st ChatEventStore, cfg ChatEventPrunerConfig) *ChatEventPruner {
	cfg.Now, cfg.Log = now(cfg.Now), quiet(cfg.Log)
	if cfg.Retention <= 0 {
		cfg.Retention = ChatEventRetention
	}
	if cfg.Every <= 0 {
		cfg.Every = ChatEventPruneEvery
	}
	return &ChatEventPruner{cfg: cfg, st: st}
}

// Start looks every Interval until ctx ends or Stop.
func (p *ChatEventPruner) Start(ctx context.Context) { p.loop.start(ctx, p.cfg.Interval, p.pass) }

// Stop ends the loop and waits for a prune under way.
func (p *ChatEventPruner) Stop() { p.loop.stop() }

func (p *ChatEventPruner) pass(ctx context.Context) {
	now := p.cfg.Now()
	if now.Before(p.due) {
		return
	}
	if !p.cfg.Leads(ctx) {
		p.due = now.Add(chatEventLeaderRetry)
		return
	}
	p.due = now.Add(p.cfg.Every)
	n, err := p.st.PruneChatEvents(ctx, now.Add(-p.cfg.Retention))
	if err != nil {
		if ctx.Err() == nil {
			p.cfg.Log.Warn("runner: chat event retention", "err", err)
		}
		return
	}
	if n > 0 {
		p.cfg.Log.Info("runner: pruned old chat deliveries", "count", n)
	}
}
