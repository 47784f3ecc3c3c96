package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reasonix/internal/ids"
	"reasonix/internal/testenv"
	"reasonix/runner/store"
)

// Migrating a Postgres schema (River's migrations and ours, each its own
// transaction) takes about 2 s on a loaded test machine, and the suite
// opens hundreds of Postgres stores. So each test binary keeps the schemas
// it migrated: when a test ends, its schema is emptied in one statement
// (TRUNCATE of every table, sequences restarted) and the rows the
// migrations themselves wrote (their bookkeeping, the epoch counters) are
// put back from a copy taken right after the first migration; the next
// test takes it from the pool, and its Open finds nothing to migrate.
//
// The pool lives as long as the test binary, which has no hook at exit, so
// its schemas outlive it: each binary holds one connection named after its
// schemas for its whole life, and a binary starting its pool drops the
// pooled schemas of every binary that holds none any more.

// poolPrefix starts the name of every pooled schema: poolPrefix, the
// binary's id, "_" and "seed" or a number.
const poolPrefix = "rxpool_"

type schemaPool struct {
	base   string    // the test database's DSN
	id     string    // this binary's part of the schema names
	anchor *pgx.Conn // held open for the binary's life, named poolPrefix+id

	mu       sync.Mutex
	free     []string
	n        int
	seedOnce sync.Once
	seedErr  error
	tables   []string // every table of a migrated schema
	seeded   []string // those the migrations wrote rows into, copied to the seed schema
}

var (
	poolOnce sync.Once
	pool     *schemaPool
	poolErr  error
)

// pooledDSN takes an empty migrated schema from the pool (or makes one)
// for t and gives it back, emptied, when t ends; it returns a DSN whose
// search_path points at it.
func pooledDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("REASONIX_TEST_POSTGRES_DSN")
	if base == "" {
		base = DefaultPostgresDSN
	}
	poolOnce.Do(func() { pool, poolErr = newSchemaPool(base) })
	if poolErr != nil {
		var unreachable *unreachableError
		if errors.As(poolErr, &unreachable) {
			testenv.Missing(t, testenv.Postgres, unreachable.err)
		}
		t.Fatalf("storetest: %v", poolErr)
	}
	schema, err := pool.take()
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() { pool.give(t, schema) })
	return withSearchPath(base, schema)
}

type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }

func newSchemaPool(base string) (*schemaPool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := &schemaPool{base: base, id: ids.Hex(6)}
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		return nil, fmt.Errorf("test database: %w", err)
	}
	cfg.RuntimeParams["application_name"] = poolPrefix + p.id
	// A test that left a connection holding a lock on its schema makes
	// the emptying fail rather than hang; the schema is then dropped.
	cfg.RuntimeParams["lock_timeout"] = "10s"
	if p.anchor, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return nil, &unreachableError{err}
	}
	p.dropAbandoned(ctx)
	return p, nil
}

// dropAbandoned drops the pooled schemas of binaries that ended: their
// connection named after them is gone. Failing to is not this binary's
// problem; a later one tries again.
func (p *schemaPool) dropAbandoned(ctx context.Context) {
	rows, err := p.anchor.Query(ctx, `SELECT nspname FROM pg_namespace n
		WHERE starts_with(nspname, $1) AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a
			WHERE a.application_name = $1 || split_part(substr(n.nspname, length($1) + 1), '_', 1))`, poolPrefix)
	if err != nil {
		return
	}
	schemas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, s := range schemas {
		_, _ = p.anchor.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE")
	}
}

// take returns an empty migrated schema: a free one, else a new one,
// migrated outside the lock (parallel tests each migrate their own); the
// first new one also fills the seed schema.
func (p *schemaPool) take() (string, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return s, nil
	}
	p.n++
	schema := fmt.Sprintf("%s%s_%d", poolPrefix, p.id, p.n)
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.base)
	if err != nil {
		return "", fmt.Errorf("test database: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", fmt.Errorf("create schema: %w", err)
	}
	st, err := store.Open(ctx, store.Config{Driver: store.DriverPostgres, DSN: withSearchPath(p.base, schema), Logger: Quiet()})
	if err != nil {
		return "", fmt.Errorf("migrate schema %s: %w", schema, err)
	}
	st.Close()
	p.seedOnce.Do(func() { p.seedErr = p.seed(ctx, conn, schema) })
	if p.seedErr != nil {
		return "", p.seedErr
	}
	return schema, nil
}

// seed lists the tables of the freshly migrated schema and copies those
// holding rows into the seed schema.
func (p *schemaPool) seed(ctx context.Context, conn *pgx.Conn, schema string) error {
	rows, err := conn.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", schema)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	seedSchema := poolPrefix + p.id + "_seed"
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+seedSchema); err != nil {
		return fmt.Errorf("create the seed schema: %w", err)
	}
	var seeded []string
	for _, tb := range tables {
		var any bool
		from := pgx.Identifier{schema, tb}.Sanitize()
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+from+")").Scan(&any); err != nil {
			return fmt.Errorf("look into %s: %w", tb, err)
		}
		if !any {
			continue
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE "+pgx.Identifier{seedSchema, tb}.Sanitize()+" AS TABLE "+from); err != nil {
			return fmt.Errorf("copy the rows of %s: %w", tb, err)
		}
		seeded = append(seeded, tb)
	}
	p.tables, p.seeded = tables, seeded
	return nil
}

// give empties schema and returns it to the pool; a schema it cannot
// empty is dropped.
func (p *schemaPool) give(t testing.TB, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, len(p.tables))
	for i, tb := range p.tables {
		names[i] = pgx.Identifier{schema, tb}.Sanitize()
	}
	// One simple-protocol round trip: the statements run as one
	// transaction, so the schema is either emptied and seeded or left
	// as it was.
	var sql strings.Builder
	sql.WriteString("TRUNCATE " + strings.Join(names, ", ") + " RESTART IDENTITY CASCADE;")
	for _, tb := range p.seeded {
		fmt.Fprintf(&sql, " INSERT INTO %s SELECT * FROM %s;", pgx.Identifier{schema, tb}.Sanitize(),
			pgx.Identifier{poolPrefix + p.id + "_seed", tb}.Sanitize())
	}
	if _, err := p.anchor.Exec(ctx, sql.String()); err == nil {
		p.free = append(p.free, schema)
		return
	}
	if _, err := p.anchor.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
		t.Errorf("storetest: drop schema %s: %v", schema, err)
	}
}
