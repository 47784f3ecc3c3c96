package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
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
}

// riverRunner is a working River client.
type riverRunner interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

type bridge[TTx any] struct {
	driver riverdriver.Driver[TTx]
	unwrap func(txn) TTx
	// client inserts, retries and reads jobs; it is never started, so it
	// owns no goroutines.
	client      *river.Client[TTx]
	log         *slog.Logger
	maxAttempts int
}

func newBridge[TTx any](driver riverdriver.Driver[TTx], unwrap func(txn) TTx, log *slog.Logger, maxAttempts int) (*bridge[TTx], error) {
	// FetchCooldown here only paces insert notifications: at the minimum,
	// every insert tells the nodes (LISTEN/NOTIFY on Postgres) instead of
	// one per 100 ms, the rest of a burst waiting for their next poll.
	c, err := river.NewClient(driver, &river.Config{Logger: log, MaxAttempts: maxAttempts, FetchCooldown: river.FetchCooldownMin})
	if err != nil {
		return nil, fmt.Errorf("store: river client: %w", err)
	}
	return &bridge[TTx]{driver: driver, unwrap: unwrap, client: c, log: log, maxAttempts: maxAttempts}, nil
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

func sqliteUnwrap(tx txn) *sql.Tx  { return tx.(*sqliteTx).tx }
func postgresUnwrap(tx txn) pgx.Tx { return tx.(*postgresTx).tx }
