package store

import (
	"context"
	"fmt"
	"strings"
)

// migrateLockKey serializes concurrent migrations from several nodes on
// Postgres (an arbitrary constant: "rsnx" in ASCII).
const migrateLockKey = 0x72736e78

// Migrate brings the database to the latest schema: River's own migrations
// first (each in its own transaction, as River requires), then ours in one
// transaction, recorded in reasonix_migrations. On Postgres it holds an
// advisory lock throughout, so nodes starting together do not race. It is
// idempotent, called by Open, and exported for `reasonix migrate`.
func (s *Store) Migrate(ctx context.Context) error {
	unlock, err := s.db.lock(ctx, migrateLockKey)
	if err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	defer unlock()
	if err := s.river.migrate(ctx); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx txn) error {
		if _, err := tx.exec(ctx, `CREATE TABLE IF NOT EXISTS reasonix_migrations (
			version    INTEGER PRIMARY KEY,
			applied_at BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("store: create reasonix_migrations: %w", err)
		}
		var have int
		if err := tx.queryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM reasonix_migrations").Scan(&have); err != nil {
			return fmt.Errorf("store: read schema version: %w", err)
		}
		if have > len(migrations) {
			return fmt.Errorf("store: database schema version %d is newer than this binary knows (%d); upgrade reasonix", have, len(migrations))
		}
		for _, m := range migrations[have:] {
			text := m.sql
			if s.dialect == dialectPostgres && m.postgres != "" {
				text = m.postgres
			}
			for _, stmt := range splitStatements(text) {
				if _, err := tx.exec(ctx, stmt); err != nil {
					return fmt.Errorf("store: migration %d: %w", m.version, err)
				}
			}
			if _, err := tx.exec(ctx, "INSERT INTO reasonix_migrations (version, applied_at) VALUES (?, ?)",
				m.version, micros(s.now())); err != nil {
				return fmt.Errorf("store: record migration %d: %w", m.version, err)
			}
		}
		return nil
	})
}

// LatestSchemaVersion reports the version Migrate brings our schema to.
func LatestSchemaVersion() int { return len(migrations) }

// SchemaVersion reports the latest of our migrations applied to the database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.queryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM reasonix_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("store: read schema version: %w", err)
	}
	return v, nil
}

// splitStatements splits a migration on ";" at line ends. Our migrations
// hold no semicolons inside literals or bodies, which keeps this honest.
func splitStatements(text string) []string {
	var out []string
	for _, part := range strings.Split(text, ";\n") {
		if p := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), ";")); p != "" {
			out = append(out, p)
		}
	}
	return out
}
