package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"reasonix/config"
	"reasonix/internal/secretenv"
	"reasonix/runner/store"
)

// openStore opens the configured database (migrating it). The Postgres DSN
// comes from the variable [store] dsn_env names and never appears in errors.
func openStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (*store.Store, error) {
	sc := store.Config{Driver: cfg.Store.Driver, Path: cfg.DataDir(), Logger: log,
		MaxConns: store.PoolConns(cmp.Or(cfg.Runner.MaxConcurrentTasks, 4))}
	if cfg.Store.Driver == config.DriverPostgres {
		dsn, ok := secretenv.Lookup(cfg.Store.DSNEnv)
		if !ok || strings.TrimSpace(dsn) == "" {
			return nil, &configError{fmt.Errorf("[store] driver = \"postgres\" needs the DSN in $%s, which is not set", cfg.Store.DSNEnv)}
		}
		sc.DSN = dsn
	}
	if sc.Driver != config.DriverPostgres && sc.Path == "" {
		return nil, &configError{fmt.Errorf("no data directory: set [store] path or REASONIX_HOME")}
	}
	st, err := store.Open(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("opening the %s store: %w", cmpString(sc.Driver, config.DriverSQLite), err)
	}
	return st, nil
}

// migrate is `reasonix migrate`: bring the database schema up to date.
func migrate(file string, stdout, stderr io.Writer) error {
	return withStore(file, stderr, func(ctx context.Context, st *store.Store) error {
		if err := st.Migrate(ctx); err != nil {
			return err
		}
		v, err := st.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s store at schema version %d (latest %d)\n", st.Driver(), v, store.LatestSchemaVersion())
		return nil
	})
}

// withStore opens the configured store for an admin command.
func withStore(file string, stderr io.Writer, run func(ctx context.Context, st *store.Store) error) error {
	cfg, err := loadServiceConfig(file)
	if err != nil {
		return err
	}
	ctx := context.Background()
	st, err := openStore(ctx, cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer st.Close()
	return run(ctx, st)
}

// loadServiceConfig loads configuration for the service and its admin
// commands: a .mcp.json in the current directory is not read, because the
// service's tools come only from its own configuration. The REASONIX_*
// service variables (serveenv.go) apply to all of them alike, so an admin
// command run inside a container finds what the service there uses.
func loadServiceConfig(file string) (*config.Config, error) {
	cfg, err := config.Load(config.LoadOptions{File: configFileFromEnv(file, os.LookupEnv), SkipMCPJSON: true})
	if err != nil {
		return nil, &configError{err}
	}
	if err := applyServiceEnv(cfg, secretenv.Lookup); err != nil {
		return nil, &configError{err}
	}
	return cfg, nil
}
