package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// queueName is the River queue every task job goes to.
const queueName = "reasonix"

// TaskArgs is the River job payload of a task: only its id. Everything else
// is read from the tasks table when the job runs, so a job never carries
// stale data.
type TaskArgs struct {
	TaskID string `json:"task_id"`
	// Goal marks a goal task's job: it has no wall clock (the goal's turn
	// and cost budgets bound it), so River neither times it out nor
	// rescues it as stuck; the runner's leases notice a dead node.
	Goal bool `json:"goal,omitempty"`
}

// Kind is the River job kind of task jobs, "reasonix_task".
func (TaskArgs) Kind() string { return "reasonix_task" }

// riverBridge hides River's per-driver transaction type (*sql.Tx for SQLite,
// pgx.Tx for Postgres) behind our txn, so the rest of the package is written
// once.
type riverBridge interface {
	insertTx(ctx context.Context, tx txn, args TaskArgs) (*rivertype.JobInsertResult, error)
	jobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	jobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
	migrate(ctx context.Context) error
	newClient(cfg *river.Config) (riverRunner, error)
	// notifications is the in-process notification hub on SQLite; nil on
	// Postgres, whose notifications go through the database.
	notifications() *notifyHub
}

// riverRunner is a working River client.
type riverRunner interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
}

type bridge[TTx any] struct {
	driver riverdriver.Driver[TTx]
	unwrap func(txn) TTx
	// client inserts, retries and reads jobs; it is never started, so it
	// owns no goroutines.
	client      *river.Client[TTx]
	log         *slog.Logger
	maxAttempts int
	hub         *notifyHub
}

func newBridge[TTx any](driver riverdriver.Driver[TTx], unwrap func(txn) TTx, log *slog.Logger, maxAttempts int) (*bridge[TTx], error) {
	var hub *notifyHub
	if d, ok := any(driver).(*riversqlite.Driver); ok {
		w := newSQLiteDriver(d)
		hub, driver = w.hub, any(w).(riverdriver.Driver[TTx])
	}
	// FetchCooldown here only paces insert notifications: at the minimum,
	// every insert tells the nodes (LISTEN/NOTIFY on Postgres) instead of
	// one per 100 ms, the rest of a burst waiting for their next poll.
	c, err := river.NewClient(driver, &river.Config{Logger: log, MaxAttempts: maxAttempts, FetchCooldown: river.FetchCooldownMin})
	if err != nil {
		return nil, fmt.Errorf("store: river client: %w", err)
	}
	return &bridge[TTx]{driver: driver, unwrap: unwrap, client: c, log: log, maxAttempts: maxAttempts, hub: hub}, nil
}

func (b *bridge[TTx]) insertTx(ctx context.Context, tx txn, args TaskArgs) (*rivertype.JobInsertResult, error) {
	return b.client.InsertTx(ctx, b.unwrap(tx), args, &river.InsertOpts{Queue: queueName, MaxAttempts: b.maxAttempts})
}

func (b *bridge[TTx]) jobGet(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return b.client.JobGet(ctx, id)
}

func (b *bridge[TTx]) jobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return b.client.JobRetry(ctx, id)
}

// migrate runs River's migrations, each in its own transaction: some of
// them (adding enum values on Postgres) cannot share one.
func (b *bridge[TTx]) migrate(ctx context.Context) error {
	m, err := rivermigrate.New(b.driver, &rivermigrate.Config{Logger: b.log})
	if err != nil {
		return fmt.Errorf("store: river migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("store: river migrations: %w", err)
	}
	return nil
}

func (b *bridge[TTx]) newClient(cfg *river.Config) (riverRunner, error) {
	return river.NewClient(b.driver, cfg)
}

func (b *bridge[TTx]) notifications() *notifyHub { return b.hub }

func sqliteUnwrap(tx txn) *sql.Tx  { return tx.(*sqliteTx).tx }
func postgresUnwrap(tx txn) pgx.Tx { return tx.(*postgresTx).tx }

// --- SQLite notifications ---

// River's SQLite driver emulates LISTEN/NOTIFY with an outbox table that
// every listener polls every 50 ms, whether or not anything happens: with
// the fetch poll that was most of an idle node's CPU. On SQLite one
// process owns the database, so its notifications are delivered in
// process instead: the executors publish what they notify to a hub, and
// the listener waits on the hub without touching the database. What
// another process (an admin command) inserts is found by the queue's
// fetch poll.
//
// A notification sent inside a transaction is published before that
// transaction commits. The pool has one connection (see openSQLite), so
// whatever a listener does about it (a fetch) queues behind the
// transaction and sees its outcome.

// notifyHub fans notifications out to the listeners of one Store, and
// signals every dozing queue (see Queue.doze) of any notification.
type notifyHub struct {
	mu        sync.Mutex
	listeners map[*hubListener]struct{}
	any       signals
}

func (h *notifyHub) publish(topic string, payloads []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.listeners {
		l.deliver(topic, payloads)
	}
	h.any.signal("")
}

// subscribeAll returns a channel signalled (coalesced) on every
// notification, and the function that ends the subscription.
func (h *notifyHub) subscribeAll() (<-chan struct{}, func()) { return h.any.subscribe("") }

// sqliteDriver is River's SQLite driver with notifications through hub.
type sqliteDriver struct {
	*riversqlite.Driver
	hub *notifyHub
}

func newSQLiteDriver(d *riversqlite.Driver) *sqliteDriver {
	return &sqliteDriver{Driver: d, hub: &notifyHub{listeners: map[*hubListener]struct{}{}}}
}

func (d *sqliteDriver) GetExecutor() riverdriver.Executor {
	return hubExec{d.Driver.GetExecutor(), d.hub}
}

func (d *sqliteDriver) UnwrapExecutor(tx *sql.Tx) riverdriver.ExecutorTx {
	return hubExecTx{d.Driver.UnwrapExecutor(tx), d.hub}
}

func (d *sqliteDriver) GetListener(p *riverdriver.GetListenenerParams) riverdriver.Listener {
	return &hubListener{hub: d.hub, schema: p.Schema, wake: make(chan struct{}, 1)}
}

type hubExec struct {
	riverdriver.Executor
	hub *notifyHub
}

func (e hubExec) Begin(ctx context.Context) (riverdriver.ExecutorTx, error) {
	tx, err := e.Executor.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return hubExecTx{tx, e.hub}, nil
}

// NotifyMany still writes River's outbox, which River's cleaner empties.
func (e hubExec) NotifyMany(ctx context.Context, p *riverdriver.NotifyManyParams) error {
	if err := e.Executor.NotifyMany(ctx, p); err != nil {
		return err
	}
	e.hub.publish(p.Topic, p.Payload)
	return nil
}

type hubExecTx struct {
	riverdriver.ExecutorTx
	hub *notifyHub
}

func (t hubExecTx) Begin(ctx context.Context) (riverdriver.ExecutorTx, error) {
	tx, err := t.ExecutorTx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return hubExecTx{tx, t.hub}, nil
}

func (t hubExecTx) NotifyMany(ctx context.Context, p *riverdriver.NotifyManyParams) error {
	if err := t.ExecutorTx.NotifyMany(ctx, p); err != nil {
		return err
	}
	t.hub.publish(p.Topic, p.Payload)
	return nil
}

// hubListener is a River listener fed by a notifyHub.
type hubListener struct {
	hub    *notifyHub
	schema string
	wake   chan struct{} // something was queued (capacity 1)

	mu      sync.Mutex
	topics  map[string]bool
	pending []riverdriver.Notification
}

func (l *hubListener) deliver(topic string, payloads []string) {
	l.mu.Lock()
	if !l.topics[topic] {
		l.mu.Unlock()
		return
	}
	for _, p := range payloads {
		l.pending = append(l.pending, riverdriver.Notification{Topic: topic, Payload: p})
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *hubListener) Connect(context.Context) error {
	l.hub.mu.Lock()
	defer l.hub.mu.Unlock()
	if _, ok := l.hub.listeners[l]; ok {
		return errors.New("store: listener already connected")
	}
	l.hub.listeners[l] = struct{}{}
	return nil
}

func (l *hubListener) Close(context.Context) error {
	l.hub.mu.Lock()
	delete(l.hub.listeners, l)
	l.hub.mu.Unlock()
	l.mu.Lock()
	l.topics, l.pending = nil, nil
	l.mu.Unlock()
	return nil
}

func (l *hubListener) Listen(_ context.Context, topic string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.topics == nil {
		l.topics = map[string]bool{}
	}
	l.topics[topic] = true
	return nil
}

func (l *hubListener) Unlisten(_ context.Context, topic string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.topics, topic)
	return nil
}

func (l *hubListener) Ping(context.Context) error { return nil }
func (l *hubListener) Schema() string             { return l.schema }
func (l *hubListener) SetAfterConnectExec(string) {}

func (l *hubListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	for {
		l.mu.Lock()
		for len(l.pending) > 0 {
			n := l.pending[0]
			l.pending = l.pending[1:]
			if l.topics[n.Topic] { // still subscribed
				l.mu.Unlock()
				return &n, nil
			}
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-l.wake:
		}
	}
}
