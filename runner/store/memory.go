package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"reasonix/internal/ids"
)

// Memories are the facts an agent keeps between tasks: what `remember`
// saved, what `memory` lists and what the recall before each turn draws
// from. They live here, not on a node's disk, so every node of a cluster
// recalls the same facts.

// MemoryKind is what a memory belongs to.
type MemoryKind string

// The scopes of a memory. A workspace memory is for every task of that
// workspace; a user memory only for the tasks of that principal.
const (
	MemoryWorkspace MemoryKind = "workspace"
	MemoryUser      MemoryKind = "user"
)

// MemoryScope names the owner of a memory: a workspace by name or a user
// by principal ("slack:T1:U1", "token:ci").
type MemoryScope struct {
	Kind MemoryKind
	Name string
}

// String is "workspace:<name>" or "user:<principal>".
func (s MemoryScope) String() string { return string(s.Kind) + ":" + s.Name }

// ParseMemoryScope reads the String form back; an unknown kind or an empty
// name wraps ErrInvalid.
func ParseMemoryScope(v string) (MemoryScope, error) {
	kind, name, _ := strings.Cut(v, ":")
	sc := MemoryScope{Kind: MemoryKind(kind), Name: name}
	return sc, sc.validate()
}

func (s MemoryScope) validate() error {
	if s.Kind != MemoryWorkspace && s.Kind != MemoryUser {
		return invalid("memory scope %q is not workspace or user", s.Kind)
	}
	if strings.TrimSpace(s.Name) == "" || len(s.Name) > 256 {
		return invalid("a memory scope names its %s (at most 256 bytes)", s.Kind)
	}
	return nil
}

// MaxMemoryText bounds one memory: a fact, not a document (and the unique
// index over the text stays within every database's key limit).
const MaxMemoryText = 1000

// NewMemory is a memory to record.
type NewMemory struct {
	Scope MemoryScope // required
	Text  string      // required; trimmed, at most MaxMemoryText bytes
	By    string      // the principal that saved it; required
	// TaskID is the task whose agent saved it; empty for one saved by a
	// person.
	TaskID string
}

// Memory is a stored memory.
type Memory struct {
	ID          string
	Scope       MemoryScope
	Text        string
	By          string
	TaskID      string
	CreatedAt   time.Time
	ForgottenAt time.Time // zero while it is remembered
	ForgottenBy string
}

// Live reports whether m is remembered (not forgotten).
func (m Memory) Live() bool { return m.ForgottenAt.IsZero() }

const memoryCols = `id, scope_kind, scope_name, text, created_by, task_id, created_at, forgotten_at, forgotten_by`

func scanMemory(r row) (Memory, error) {
	var (
		m         Memory
		kind      string
		created   int64
		forgotten sql.NullInt64
	)
	if err := r.Scan(&m.ID, &kind, &m.Scope.Name, &m.Text, &m.By, &m.TaskID, &created, &forgotten, &m.ForgottenBy); err != nil {
		return Memory{}, err
	}
	m.Scope.Kind = MemoryKind(kind)
	m.CreatedAt, m.ForgottenAt = fromMicros(created), fromNullMicros(forgotten)
	return m, nil
}

func (n *NewMemory) validate() error {
	if err := n.Scope.validate(); err != nil {
		return err
	}
	n.Text = strings.TrimSpace(n.Text)
	switch {
	case n.Text == "":
		return invalid("a memory has text")
	case len(n.Text) > MaxMemoryText:
		return invalid("a memory is at most %d bytes (this one is %d): keep one short fact", MaxMemoryText, len(n.Text))
	case !utf8.ValidString(n.Text) || strings.ContainsRune(n.Text, 0):
		return invalid("a memory is UTF-8 text without NUL bytes")
	case n.By == "":
		return invalid("a memory names who saved it")
	}
	return nil
}

// AddMemory records a memory. When the same text is already remembered in
// the same scope, that memory is returned unchanged and created is false:
// remembering twice is one memory.
func (s *Store) AddMemory(ctx context.Context, n NewMemory) (_ Memory, created bool, _ error) {
	if err := n.validate(); err != nil {
		return Memory{}, false, err
	}
	now := s.now()
	var out Memory
	err := s.inTx(ctx, func(tx txn) error {
		added, err := tx.exec(ctx, `INSERT INTO memories (id, scope_kind, scope_name, text, created_by, task_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			ids.Sortable("mem_", now), string(n.Scope.Kind), n.Scope.Name, n.Text, n.By, n.TaskID, micros(now))
		if err != nil {
			return fmt.Errorf("store: add memory: %w", err)
		}
		if created = added > 0; created {
			if err := bumpMemoryEpoch(ctx, tx); err != nil {
				return err
			}
		}
		out, err = scanMemory(tx.queryRow(ctx, "SELECT "+memoryCols+` FROM memories
			WHERE scope_kind = ? AND scope_name = ? AND text = ? AND forgotten_at IS NULL`, string(n.Scope.Kind), n.Scope.Name, n.Text))
		if err != nil {
			return fmt.Errorf("store: read memory: %w", err)
		}
		return nil
	})
	if err != nil {
		return Memory{}, false, err
	}
	return out, created, nil
}

func bumpMemoryEpoch(ctx context.Context, tx txn) error {
	if _, err := tx.exec(ctx, "UPDATE memory_epoch SET n = n + 1 WHERE id = 1"); err != nil {
		return fmt.Errorf("store: memory epoch: %w", err)
	}
	return nil
}

// MemoryEpoch is a counter that moves with every memory added or
// forgotten, on every node: an index of memories read at epoch e is current
// as long as the epoch is still e.
func (s *Store) MemoryEpoch(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.queryRow(ctx, "SELECT n FROM memory_epoch WHERE id = 1").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: memory epoch: %w", err)
	}
	return n, nil
}

// MemoryFilter selects memories. Zero fields do not filter.
type MemoryFilter struct {
	// Scopes keeps the memories of any of these scopes.
	Scopes []MemoryScope
	// All includes forgotten memories.
	All bool
	// Limit bounds the result (newest first); 0 is no bound.
	Limit int
}

// Memories lists the memories matching f, newest first, with the epoch
// they were read at (in the same transaction, so an index built from them
// is exactly as current as the epoch says).
func (s *Store) Memories(ctx context.Context, f MemoryFilter) ([]Memory, int64, error) {
	q := "SELECT " + memoryCols + " FROM memories WHERE 1 = 1"
	var args []any
	if len(f.Scopes) > 0 {
		parts := make([]string, len(f.Scopes))
		for i, sc := range f.Scopes {
			parts[i] = "(scope_kind = ? AND scope_name = ?)"
			args = append(args, string(sc.Kind), sc.Name)
		}
		q += " AND (" + strings.Join(parts, " OR ") + ")"
	}
	if !f.All {
		q += " AND forgotten_at IS NULL"
	}
	q += " ORDER BY created_at DESC, id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	var (
		out   []Memory
		epoch int64
	)
	err := s.inTx(ctx, func(tx txn) error {
		out = out[:0]
		if err := tx.queryRow(ctx, "SELECT n FROM memory_epoch WHERE id = 1").Scan(&epoch); err != nil {
			return fmt.Errorf("store: memory epoch: %w", err)
		}
		rs, err := tx.query(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("store: list memories: %w", err)
		}
		defer rs.Close()
		for rs.Next() {
			m, err := scanMemory(rs)
			if err != nil {
				return fmt.Errorf("store: list memories: %w", err)
			}
			out = append(out, m)
		}
		if err := rs.Err(); err != nil {
			return fmt.Errorf("store: list memories: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, epoch, nil
}

// Memory returns memory id, or an error wrapping ErrNotFound.
func (s *Store) Memory(ctx context.Context, id string) (Memory, error) {
	m, err := scanMemory(s.db.queryRow(ctx, "SELECT "+memoryCols+" FROM memories WHERE id = ?", id))
	if isNoRows(err) {
		return Memory{}, fmt.Errorf("store: memory %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("store: memory %s: %w", id, err)
	}
	return m, nil
}

// ForgetMemory forgets memory id now, recording who forgot it. An unknown
// id wraps ErrNotFound; forgetting a forgotten memory returns it as it is
// (the first forget stands).
func (s *Store) ForgetMemory(ctx context.Context, id, by string) (Memory, error) {
	if by == "" {
		return Memory{}, invalid("forgetting a memory names who forgot it")
	}
	now := s.now()
	var out Memory
	err := s.inTx(ctx, func(tx txn) error {
		n, err := tx.exec(ctx, "UPDATE memories SET forgotten_at = ?, forgotten_by = ? WHERE id = ? AND forgotten_at IS NULL",
			micros(now), by, id)
		if err != nil {
			return fmt.Errorf("store: forget memory %s: %w", id, err)
		}
		if n > 0 {
			if err := bumpMemoryEpoch(ctx, tx); err != nil {
				return err
			}
		}
		out, err = scanMemory(tx.queryRow(ctx, "SELECT "+memoryCols+" FROM memories WHERE id = ?", id))
		if isNoRows(err) {
			return fmt.Errorf("store: memory %s: %w", id, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return Memory{}, err
	}
	return out, nil
}
