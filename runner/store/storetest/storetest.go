// Package storetest opens real, isolated stores for tests: a fresh SQLite
// file in a temporary directory, or a fresh schema in the test Postgres
// database. Import it only from _test.go files.
package storetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reasonix/internal/ids"
	"reasonix/internal/testenv"
	"reasonix/runner/store"
)

// DefaultPostgresDSN is where scripts/test-deps.sh puts the test database.
// It is used when REASONIX_TEST_POSTGRES_DSN is unset.
const DefaultPostgresDSN = "postgres://reasonix:reasonix@127.0.0.1:5432/reasonix_test?sslmode=disable"

// Opener opens a fresh, empty, migrated store for one test and closes it
// when the test ends. cfg.Driver, Path and DSN are filled in by the opener;
// a nil cfg.Logger becomes a discarding one.
type Opener func(t testing.TB, cfg store.Config) *store.Store

// SQLite opens a store on a new SQLite file in t.TempDir(). The file starts
// as a copy of one migrated once per test binary (see sqliteTemplate); Open
// still runs Migrate on it, which then finds nothing left to do.
func SQLite(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	cfg.Driver, cfg.Path = store.DriverSQLite, t.TempDir()
	db, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Path, store.SQLiteFile), db, 0o600); err != nil {
		t.Fatalf("storetest: %v", err)
	}
	return open(t, cfg)
}

// sqliteTemplate is a freshly migrated SQLite database, made once per test
// binary. Migrating (River's migrations and ours, a few hundred statements)
// costs about half a CPU-second under -race, and the suite opens stores
// hundreds of times. Closing the store's only connection checkpoints the
// write-ahead log into the file, so the file alone is the whole database.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-")
	if err != nil {
		return nil, fmt.Errorf("template database: %w", err)
	}
	defer os.RemoveAll(dir)
	s, err := store.Open(context.Background(), store.Config{Driver: store.DriverSQLite, Path: dir, Logger: Quiet()})
	if err != nil {
		return nil, fmt.Errorf("template database: %w", err)
	}
	s.Close()
	if wal, err := os.Stat(filepath.Join(dir, store.SQLiteFile+"-wal")); err == nil && wal.Size() > 0 {
		return nil, fmt.Errorf("template database: %d bytes left in the write-ahead log after closing", wal.Size())
	}
	return os.ReadFile(filepath.Join(dir, store.SQLiteFile))
})

// Postgres opens a store in a schema of its own in the test Postgres
// database (REASONIX_TEST_POSTGRES_DSN or DefaultPostgresDSN), migrated and
// empty: one this test binary migrated before and emptied after an earlier
// test (see schemaPool), else a new one.
func Postgres(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	cfg.Driver, cfg.DSN = store.DriverPostgres, pooledDSN(t)
	return open(t, cfg)
}

// SharedPostgres takes a schema of its own in the test Postgres database,
// as Postgres does, and returns an opener of stores on it: the stores share
// one database, as the nodes of a cluster do. Each is closed when the test
// ends.
func SharedPostgres(t testing.TB) func() *store.Store {
	t.Helper()
	dsn := pooledDSN(t)
	return func() *store.Store {
		t.Helper()
		return open(t, store.Config{Driver: store.DriverPostgres, DSN: dsn})
	}
}

// Openers are both databases by name, for running one suite on each.
var Openers = map[string]Opener{store.DriverSQLite: SQLite, store.DriverPostgres: Postgres}

func open(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = Quiet()
	}
	s, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("storetest: open %s: %v", cfg.Driver, err)
	}
	t.Cleanup(s.Close)
	return s
}

// Quiet is a logger that drops everything (River logs every start and stop).
func Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// PostgresDSN creates a fresh schema in the test database, drops it when the
// test ends, and returns a DSN whose search_path points at it, so tests never
// see each other's rows. The database is REASONIX_TEST_POSTGRES_DSN or
// DefaultPostgresDSN. When it cannot be reached the test is skipped, unless
// the environment promises Postgres (see internal/testenv): then it fails.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("REASONIX_TEST_POSTGRES_DSN")
	if base == "" {
		base = DefaultPostgresDSN
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		testenv.Missing(t, testenv.Postgres, err)
	}
	defer conn.Close(context.Background())
	schema := "test_" + ids.Hex(6)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("storetest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("storetest: drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("storetest: drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(base, schema)
}

func withSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " search_path=" + schema
}
