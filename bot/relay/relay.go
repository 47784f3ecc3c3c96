package relay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"reasonix/bot"
	"reasonix/config"
	"reasonix/internal/redact"
	"reasonix/runner"
)

// Config configures a Relay.
type Config struct {
	Service *runner.Service // required
	Store   Store           // required: the relay's durable memory (the service's store implements it)
	// Bot is the [bot] configuration: allow lists, approvers, routes.
	Bot config.Bot
	// Transports are the enabled platforms, by Name.
	Transports []bot.Transport
	// Secrets are masked in everything posted, on top of what the runner
	// already redacts from events (bot tokens, for one).
	Secrets []string
	Logger  *slog.Logger
	// EditInterval spaces writes to one channel; default 1s, the platforms'
	// sustained limit.
	EditInterval time.Duration
	// ScanInterval is how often tasks from elsewhere (the API, schedules,
	// webhooks) that name a chat notify target are looked for; default 2s.
	ScanInterval time.Duration
	// StatusDelay is how long a task on a platform that shows typing goes
	// without a status message: longer than a quick answer takes, short
	// enough that a longer task shows its progress early. Default 3s.
	StatusDelay time.Duration
	// MaxReportRunes caps a final report; the tail is kept. Default 12000.
	MaxReportRunes int
	// MaxPostsPerTask caps a task's thread messages besides its status
	// and approvals; default Bot.MaxPostsPerTask, else
	// config.DefaultMaxPostsPerTask.
	MaxPostsPerTask int
	// Node names this relay among the serve nodes sharing the store;
	// default the service's node id.
	Node string
	// LeaseTTL is how long a task's relay stays this node's without a
	// renewal (renewed every third of it); another node takes a dead
	// node's tasks over after it. Default 15s.
	LeaseTTL time.Duration
	// RefreshInterval is how often a running task's status message is
	// edited only to move its elapsed time; default 10s.
	RefreshInterval time.Duration
	// ClaimWindow is how long a delivery claimed by a handler that has
	// not finished it is left to that handler; a redelivery after it
	// handles it again (the first handler is taken to have died). Default
	// 15s: far longer than handling takes (a store write and a paced
	// post or two), as long as the Telegram poll lease's default ttl, so a
	// node taking a dead node's polling over waits little or not at all
	// for the dead node's claims, and short enough that a message caught
	// in a crash is late by seconds, not minutes.
	ClaimWindow time.Duration
	// RecoverInterval is how often the relay looks for deliveries
	// recorded on receipt whose receiver died before finishing them (see
	// receipt.go); default 5s. Cheap: one indexed query.
	RecoverInterval time.Duration
	// PublicURL is [serve] public_url without its trailing slash: when
	// set, status messages and reports link to the task under it.
	PublicURL string
	// StallAfter is how long a running task goes without a new event
	// before its thread says it makes no progress; default
	// config.DefaultStallAfter ([runner] stall_after).
	StallAfter time.Duration
	Now        func() time.Time
}

// DefaultClaimWindow is Config.ClaimWindow's default.
const DefaultClaimWindow = 15 * time.Second

// Relay connects transports to the runner. Start it after the service and
// stop it before.
type Relay struct {
	cfg        Config
	svc        *runner.Service
	st         Store
	log        *slog.Logger
	transports map[string]bot.Transport
	access     map[string]access
	redact     *redact.Redactor
	pace       *pacer
	now        func() time.Time

	mu       sync.Mutex
	watching map[string]bool // task ids with a live watcher
	refused  map[string]time.Time
	ended    map[string]bool // task/end keys whose end was relayed (see ended.go)
	names    names
	dms      dmChannels
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	// scans and recoveries count the passes done: a test's signal that
	// the relay has looked again since (see export_test.go).
	scans, recoveries atomic.Int64
}

var (
	_ bot.Receiver = (*Relay)(nil)
)

// New validates cfg and returns a relay that is not started.
func New(cfg Config) (*Relay, error) {
	if cfg.Service == nil || cfg.Store == nil {
		return nil, errors.New("relay: Service and Store are required")
	}
	cfg.EditInterval = cmp.Or(cfg.EditInterval, time.Second)
	cfg.ScanInterval = cmp.Or(cfg.ScanInterval, 2*time.Second)
	cfg.StatusDelay = cmp.Or(cfg.StatusDelay, 3*time.Second)
	cfg.MaxReportRunes = cmp.Or(cfg.MaxReportRunes, 12000)
	cfg.Node = cmp.Or(cfg.Node, cfg.Service.Node())
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, 15*time.Second)
	cfg.RefreshInterval = cmp.Or(cfg.RefreshInterval, 10*time.Second)
	cfg.ClaimWindow = cmp.Or(cfg.ClaimWindow, DefaultClaimWindow)
	cfg.RecoverInterval = cmp.Or(cfg.RecoverInterval, 5*time.Second)
	cfg.StallAfter = cmp.Or(cfg.StallAfter, config.DefaultStallAfter)
	cfg.MaxPostsPerTask = cmp.Or(cfg.MaxPostsPerTask, cfg.Bot.MaxPostsPerTask, config.DefaultMaxPostsPerTask)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Relay{
		cfg: cfg, svc: cfg.Service, st: cfg.Store, log: cfg.Logger, now: cfg.Now,
		transports: map[string]bot.Transport{}, access: accessFor(cfg.Bot),
		redact: redact.New(cfg.Secrets...), pace: newPacer(cfg.EditInterval, cfg.Now),
		watching: map[string]bool{}, refused: map[string]time.Time{},
		names: names{known: map[string]nameEntry{}, inflight: map[string]chan struct{}{}},
	}
	for _, t := range cfg.Transports {
		if _, dup := r.transports[t.Name()]; dup {
			return nil, fmt.Errorf("relay: transport %q given twice", t.Name())
		}
		r.transports[t.Name()] = t
	}
	return r, nil
}

// Start starts the transports' intake, resumes relaying the live tasks
// that report to chat, and watches for new ones from other intakes.
func (r *Relay) Start(ctx context.Context) error {
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for name, t := range r.transports {
		if err := t.Start(r.ctx, r); err != nil {
			r.cancel()
			return fmt.Errorf("relay: starting %s: %w", name, err)
		}
	}
	r.wg.Add(1)
	go r.scan()
	r.wg.Go(r.recoverLoop)
	return nil
}

// Stop stops intake and the watchers; tasks keep running and are relayed
// again when a relay starts.
func (r *Relay) Stop(ctx context.Context) error {
	var errs []error
	for name, t := range r.transports {
		if err := t.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("relay: stopping %s: %w", name, err))
		}
	}
	if r.cancel != nil {
		r.cancel()
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
	}
	return errors.Join(errs...)
}

// scan starts a watcher for every live task with a chat target that has
// none: tasks from this relay after a restart, and tasks from elsewhere.
func (r *Relay) scan() {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.ScanInterval)
	defer t.Stop()
	for {
		r.scanOnce()
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Relay) scanOnce() {
	f := runner.TaskFilter{States: []runner.State{runner.StateQueued, runner.StateRunning, runner.StateWaitingApproval, runner.StateWaitingCI}, Limit: 500}
	page, err := r.svc.Tasks(r.ctx, f)
	if err != nil {
		if r.ctx.Err() == nil {
			r.log.Warn("relay: listing live tasks", "err", err)
		}
		return
	}
	for _, t := range page.Tasks {
		for _, n := range t.Notify {
			if _, ok := r.transports[n.Transport]; ok {
				r.watch(t.ID, n)
				break
			}
		}
	}
	r.scanEnded(r.ctx)
	r.scanSchedules(r.ctx)
	r.scans.Add(1)
}

// post sends m through t, paced per channel and retried after a rate
// limit; it gives up only when ctx ends or the platform keeps failing.
func (r *Relay) post(ctx context.Context, t bot.Transport, m bot.Message) (string, error) {
	var id string
	err := r.write(ctx, t, m.Channel, false, func(wctx context.Context) (err error) { id, err = t.Post(wctx, m); return err })
	return id, err
}

// postUrgent is post in the pacer's urgent lane (see pacer.wait): for
// what a person must act on, an approval request.
func (r *Relay) postUrgent(ctx context.Context, t bot.Transport, m bot.Message) (string, error) {
	var id string
	err := r.write(ctx, t, m.Channel, true, func(wctx context.Context) (err error) { id, err = t.Post(wctx, m); return err })
	return id, err
}

func (r *Relay) edit(ctx context.Context, t bot.Transport, id string, m bot.Message) error {
	return r.write(ctx, t, m.Channel, false, func(wctx context.Context) error { return t.Edit(wctx, id, m) })
}

// editUrgent is edit in the pacer's urgent lane.
func (r *Relay) editUrgent(ctx context.Context, t bot.Transport, id string, m bot.Message) error {
	return r.write(ctx, t, m.Channel, true, func(wctx context.Context) error { return t.Edit(wctx, id, m) })
}

// writeTimeout bounds one platform call. A call in flight is not cut by
// Stop: a post the platform accepted but we never heard back about would
// be posted again by the next relay.
const writeTimeout = 15 * time.Second

func (r *Relay) write(ctx context.Context, t bot.Transport, channel string, urgent bool, fn func(context.Context) error) error {
	key := t.Name() + "/" + channel
	var err error
	for attempt := range 6 {
		if werr := r.pace.wait(ctx, key, interval(t, channel), urgent && attempt == 0); werr != nil {
			return werr
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		err = fn(wctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		d, limited := bot.RetryAfter(err)
		if !limited {
			d = time.Duration(attempt+1) * 500 * time.Millisecond
		}
		r.pace.penalize(key, d)
		r.log.Warn("relay: chat write failed; retrying", "transport", t.Name(), "channel", channel, "rate_limited", limited, "err", err)
	}
	return err
}

// reply posts plain text (escaped here) as a reply to in.
func (r *Relay) reply(ctx context.Context, t bot.Transport, channel, thread, text string) {
	f := t.Format()
	m := bot.Message{Channel: channel, Thread: thread, Text: f.Escape(r.redact.String(text))}
	if _, err := r.post(ctx, t, m); err != nil {
		r.log.Warn("relay: reply failed", "transport", t.Name(), "err", err)
	}
}

// safeMessage is what a chat user may see of err: a runner error's own
// message, else a generic line with the detail in the log.
func (r *Relay) safeMessage(err error, what string) string {
	var re *runner.Error
	if errors.As(err, &re) {
		return re.Message
	}
	ref := fmt.Sprintf("%08x", r.now().UnixNano()&0xffffffff)
	r.log.Error("relay: "+what, "ref", ref, "err", err)
	return fmt.Sprintf("Something went wrong while %s (ref %s). Try again, or ask an admin to look up the reference.", what, ref)
}

// interval is the transport's own spacing for channel, 0 for the default.
func interval(t bot.Transport, channel string) time.Duration {
	if p, ok := t.(bot.Pacer); ok {
		return p.Interval(channel)
	}
	return 0
}
