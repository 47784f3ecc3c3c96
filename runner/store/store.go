package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// The drivers Config.Driver accepts (the same names as config.Store).
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// SQLiteFile is the database file name inside Config.Path.
const SQLiteFile = "reasonix.db"

// Config says which database to open. The zero value is not valid: Driver
// "" means sqlite, which needs Path.
type Config struct {
	// Driver is "sqlite" (default) or "postgres".
	Driver string
	// Path is the SQLite data directory; the database is <Path>/reasonix.db.
	// The directory is created (0700) if missing.
	Path string
	// DSN is the Postgres connection string (URL or key=value form). Put
	// search_path in it to use a schema other than the default.
	DSN string
	// MaxConns bounds the Postgres connection pool; default PoolConns(4).
	// A DSN's pool_max_conns wins.
	MaxConns int
	// MaxAttempts is how many times a task's job may run before River
	// discards it (an error or a crash each use one; snoozes do not).
	// Default 3.
	MaxAttempts int
	// Now is the clock used for timestamps and approval deadlines.
	// Default time.Now.
	Now func() time.Time
	// Logger receives River's and the store's logs. Default slog.Default().
	Logger *slog.Logger
}

// Store is an open database with the Reasonix schema migrated. It is safe for
// concurrent use by many goroutines. Close it when done.
type Store struct {
	db      db
	river   riverBridge
	driver  string
	maxAtt  int
	now     func() time.Time
	log     *slog.Logger
	dialect dialect
	// deliveries counts RecordDelivery calls, to trim histories now and
	// then rather than on every delivery.
	deliveries atomic.Uint64
	// asked signals this process's scratch answerers (see ScratchAsked).
	asked signals
	// dozer is a queue of this Store that stopped River while idle (see
	// Queue.doze); it leads while no River client does.
	dozer atomic.Pointer[Queue]
	// jobs signals a dozing Postgres queue that this process inserted or
	// woke a job (on SQLite the notification hub does).
	jobs signals
	// deadlines signals an approval expirer that this process stored an
	// approval with a deadline (ApprovalDeadlines).
	deadlines signals
	// parked holds, per task id, the job (int64) whose handler returned a
	// snooze in this process that River has not recorded yet (park.go).
	parked sync.Map
}

// dialect selects the few SQL texts that differ between the databases.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// Open connects to the database described by cfg, migrates it to the latest
// schema (see Migrate) and returns the Store. It does not start any workers;
// see NewQueue.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg.Driver = cmp.Or(cfg.Driver, DriverSQLite)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, 3)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxAttempts < 1 {
		return nil, invalid("max attempts must be at least 1 (got %d)", cfg.MaxAttempts)
	}
	s := &Store{driver: cfg.Driver, maxAtt: cfg.MaxAttempts, now: cfg.Now, log: cfg.Logger}
	var err error
	switch cfg.Driver {
	case DriverSQLite:
		err = s.openSQLite(cfg)
	case DriverPostgres:
		err = s.openPostgres(ctx, cfg)
	default:
		return nil, invalid("driver must be %q or %q (got %q)", DriverSQLite, DriverPostgres, cfg.Driver)
	}
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) openSQLite(cfg Config) error {
	if cfg.Path == "" {
		return invalid("sqlite needs a data directory (path)")
	}
	if err := os.MkdirAll(cfg.Path, 0o700); err != nil {
		return fmt.Errorf("store: create data directory: %w", err)
	}
	file := filepath.Join(cfg.Path, SQLiteFile)
	// The database holds prompts, transcripts and tool output: 0600, also
	// when an older version left it readable. SQLite gives its -wal and
	// -shm files the database file's mode.
	f, err := os.OpenFile(file, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("store: create database %s: %w", file, err)
	}
	f.Close()
	if err := os.Chmod(file, 0o600); err != nil {
		return fmt.Errorf("store: secure database %s: %w", file, err)
	}
	// WAL lets readers in other processes (the CLI) proceed while the service
	// writes; busy_timeout makes a locked database wait instead of failing;
	// _txlock=immediate takes the write lock at BEGIN so two processes never
	// deadlock upgrading read locks.
	dsn := "file:" + file + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	pool, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("store: open sqlite: %w", err)
	}
	// SQLite has one writer. River runs maintenance, fetches and completions
	// in parallel; one connection serializes them in-process instead of
	// surfacing SQLITE_BUSY. Nothing in this package waits for a second
	// connection while holding a transaction, so this cannot deadlock.
	pool.SetMaxOpenConns(1)
	pool.SetConnMaxIdleTime(0)
	pool.SetConnMaxLifetime(0)
	if err := pool.Ping(); err != nil {
		_ = pool.Close()
		return fmt.Errorf("store: open sqlite %s: %w", file, err)
	}
	s.db = &sqliteDB{sqlExec{pool}, pool}
	s.dialect = dialectSQLite
	s.river, err = newBridge(riversqlite.New(pool), sqliteUnwrap, s.log, s.maxAtt)
	if err != nil {
		_ = pool.Close()
		return err
	}
	return nil
}

func (s *Store) openPostgres(ctx context.Context, cfg Config) error {
	if cfg.DSN == "" {
		return invalid("postgres needs a DSN")
	}
	pcfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		// The parse error may quote the DSN, password included.
		return invalid("postgres DSN does not parse")
	}
	if !strings.Contains(cfg.DSN, "pool_max_conns") {
		sizePool(pcfg, cfg.MaxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("store: connect postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return fmt.Errorf("store: connect postgres %s@%s: %w", pcfg.ConnConfig.User, pcfg.ConnConfig.Host, err)
	}
	s.db = newPostgresDB(pool)
	s.dialect = dialectPostgres
	s.river, err = newBridge(riverpgxv5.New(pool), postgresUnwrap, s.log, s.maxAtt)
	if err != nil {
		pool.Close()
		return err
	}
	return nil
}

// Driver reports which database this Store uses: "sqlite" or "postgres".
func (s *Store) Driver() string { return s.driver }

// Close releases the database. Stop every Queue built on s first.
func (s *Store) Close() {
	if s.db != nil {
		s.db.close()
	}
}

// inTx runs fn in one transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx txn) error) error {
	tx, err := s.db.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := tx.commit(ctx); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// micros is the stored form of a time: Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

func nullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(t), Valid: true}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isNoRows(err error) bool { return errors.Is(err, errNoRows) }
