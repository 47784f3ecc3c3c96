package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestMigrateIdempotent opens the same database twice (on Postgres
// concurrently, as two nodes would) and migrates again: the schema version
// stays the latest and the data survives.
func TestMigrateIdempotent(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		cfg  func(t *testing.T) store.Config
	}{
		{"sqlite", func(t *testing.T) store.Config {
			return store.Config{Driver: store.DriverSQLite, Path: t.TempDir(), Logger: storetest.Quiet()}
		}},
		{"postgres", func(t *testing.T) store.Config {
			return store.Config{Driver: store.DriverPostgres, DSN: storetest.PostgresDSN(t), Logger: storetest.Quiet()}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg(t)
			stores := make([]*store.Store, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			concurrent := cfg.Driver == store.DriverPostgres
			for i := range stores {
				if concurrent {
					wg.Go(func() { stores[i], errs[i] = store.Open(ctx, cfg) })
				} else {
					stores[i], errs[i] = store.Open(ctx, cfg)
				}
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("open %d: %v", i, err)
				}
				t.Cleanup(stores[i].Close)
			}
			task := mustCreate(t, stores[0], newTask("survives"), "k")
			if err := stores[1].Migrate(ctx); err != nil {
				t.Fatalf("Migrate again: %v", err)
			}
			v, err := stores[1].SchemaVersion(ctx)
			if err != nil || v != store.LatestSchemaVersion() {
				t.Errorf("SchemaVersion = %d, %v; want %d", v, err, store.LatestSchemaVersion())
			}
			if got, err := stores[1].Task(ctx, task.ID); err != nil || got.Prompt != "survives" {
				t.Errorf("task after re-migration = %+v, %v", got, err)
			}
		})
	}
}

func TestOpenValidation(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []store.Config{
		{Driver: "mysql"},
		{Driver: store.DriverSQLite},
		{Driver: store.DriverPostgres},
		{Driver: store.DriverPostgres, DSN: "postgres://user:hunter2@[::1"},
	} {
		s, err := store.Open(ctx, cfg)
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Open(%+v) = %v, want ErrInvalid", cfg, err)
		}
		if s != nil {
			s.Close()
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
}

// The SQLite database is private to its owner, also when an older version
// left it readable by others.
func TestSQLiteFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, store.SQLiteFile)
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(context.Background(), store.Config{Driver: store.DriverSQLite, Path: dir, Logger: storetest.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{store.SQLiteFile, store.SQLiteFile + "-wal"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", name, st.Mode().Perm(), err)
		}
	}
}
