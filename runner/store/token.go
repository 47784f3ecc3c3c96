package store

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"reasonix/internal/ids"
	"reasonix/policy"
)

// Role is what a principal may do. Roles are ordered: each one includes the
// rights of the ones before it.
type Role string

const (
	// RoleSubmit creates tasks, reads, and messages, cancels and resumes
	// its own tasks.
	RoleSubmit Role = "submit"
	// RoleApprove may also decide approvals (never of its own tasks unless
	// self-approval is allowed).
	RoleApprove Role = "approve"
	// RoleGrant may also choose "Allow always" on an approval: a standing
	// grant for every later task of a workspace, schedule or webhook
	// (never on its own task).
	RoleGrant Role = "grant"
	// RoleAdmin may do everything, on every task.
	RoleAdmin Role = "admin"
)

// ParseRole turns a flag or column value into a Role.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleSubmit, RoleApprove, RoleGrant, RoleAdmin:
		return r, nil
	}
	return "", fmt.Errorf("role %q is not submit, approve, grant or admin", s)
}

// Rank orders roles: submit < approve < grant < admin; an unknown role
// ranks 0.
func (r Role) Rank() int {
	switch r {
	case RoleSubmit:
		return 1
	case RoleApprove:
		return 2
	case RoleGrant:
		return 3
	case RoleAdmin:
		return 4
	}
	return 0
}

// DefaultMaxPosture is the highest posture a role's tasks may ask for when
// the token does not say: auto below admin, so a leaked submit or approve
// token cannot start a yolo task.
func (r Role) DefaultMaxPosture() policy.Posture {
	if r == RoleAdmin {
		return policy.PostureYolo
	}
	return policy.PostureAuto
}

// SecretPrefix starts every generated token secret, so a leaked one is
// recognisable (by people and by secret scanners).
const SecretPrefix = "rxt_"

// BootstrapName is the name of the service's own admin token (the generated
// <data dir>/api-token, or the variable [serve] api_token_env names). It and
// every name starting with BootstrapName+"@" are reserved for it.
const BootstrapName = "admin"

// Token is a principal that authenticates with a bearer secret. The secret
// itself is never stored or returned after CreateToken.
type Token struct {
	ID         string
	Name       string
	Role       Role
	MaxPosture policy.Posture
	CreatedAt  time.Time
	RevokedAt  time.Time // zero while the token is valid
	LastUsedAt time.Time // zero when never used; updated at most once a minute
}

// Principal is the token's principal id as tasks and decisions record it.
func (t Token) Principal() string { return "token:" + t.Name }

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// NewToken describes a token to create.
type NewToken struct {
	// Name is lower-case letters, digits, '.', '_' and '-', at most 64
	// bytes, unique; "admin" and "admin@…" are reserved.
	Name string
	Role Role
	// MaxPosture is the highest posture the token's tasks may ask for;
	// "" means Role.DefaultMaxPosture().
	MaxPosture policy.Posture
}

var tokenName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })

// NewSecret returns a fresh random token secret: SecretPrefix and 32 random
// bytes in hex.
func NewSecret() string {
	return SecretPrefix + ids.Hex(32)
}

// hashSecret is the stored form of a secret. A plain SHA-256 suffices: the
// secrets are 256 random bits, so there is nothing to brute-force.
func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

const tokenCols = "id, name, role, max_posture, secret_hash, created_at, revoked_at, last_used_at"

func scanToken(r interface{ Scan(...any) error }) (Token, string, error) {
	var (
		t                   Token
		role, posture, hash string
		created             int64
		revoked, used       sql.NullInt64
	)
	if err := r.Scan(&t.ID, &t.Name, &role, &posture, &hash, &created, &revoked, &used); err != nil {
		return Token{}, "", err
	}
	t.Role, t.MaxPosture = Role(role), policy.Posture(posture)
	t.CreatedAt, t.RevokedAt, t.LastUsedAt = fromMicros(created), fromNullMicros(revoked), fromNullMicros(used)
	return t, hash, nil
}

// CreateToken stores a new token and returns it with its secret, which is
// shown this once: only its hash is kept. A taken name is an *InputError.
func (s *Store) CreateToken(ctx context.Context, nt NewToken) (Token, string, error) {
	if !tokenName().MatchString(nt.Name) {
		return Token{}, "", invalid("token name %q: use 1-64 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", nt.Name)
	}
	if nt.Name == BootstrapName {
		return Token{}, "", invalid("the token name %q is reserved for the service's own token", nt.Name)
	}
	if nt.Role.Rank() == 0 {
		return Token{}, "", invalid("role %q is not submit, approve, grant or admin", nt.Role)
	}
	if nt.MaxPosture == "" {
		nt.MaxPosture = nt.Role.DefaultMaxPosture()
	}
	if _, err := policy.ParsePosture(string(nt.MaxPosture)); err != nil {
		return Token{}, "", invalid("max posture: %v", err)
	}
	secret, now := NewSecret(), s.now()
	t := Token{ID: ids.Sortable("tok_", now), Name: nt.Name, Role: nt.Role, MaxPosture: nt.MaxPosture, CreatedAt: fromMicros(micros(now))}
	err := s.inTx(ctx, func(tx txn) error {
		var n int
		if err := tx.queryRow(ctx, "SELECT COUNT(*) FROM tokens WHERE name = ?", t.Name).Scan(&n); err != nil {
			return fmt.Errorf("store: create token: %w", err)
		}
		if n > 0 {
			return invalid("a token named %q exists already; revoke it or pick another name", t.Name)
		}
		return insertToken(ctx, tx, t, hashSecret(secret))
	})
	if err != nil {
		return Token{}, "", err
	}
	return t, secret, nil
}

func insertToken(ctx context.Context, q querier, t Token, hash string) error {
	_, err := q.exec(ctx, "INSERT INTO tokens ("+tokenCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		t.ID, t.Name, string(t.Role), string(t.MaxPosture), hash, micros(t.CreatedAt), nullMicros(t.RevokedAt), nullMicros(t.LastUsedAt))
	if err != nil {
		return fmt.Errorf("store: insert token %s: %w", t.Name, err)
	}
	return nil
}

// RegisterBootstrapToken makes secret the admin token called name (BootstrapName,
// or BootstrapName+"@"+node when several nodes share the store, each with
// its own token file). When the secret is registered already, under any
// name, that token is returned as it is — a revoked one stays revoked.
// Otherwise name's row takes the new hash, valid again: replacing the token
// file rotates the token, and the old secret stops working.
func (s *Store) RegisterBootstrapToken(ctx context.Context, name, secret string) (Token, error) {
	if name != BootstrapName && !strings.HasPrefix(name, BootstrapName+"@") {
		return Token{}, invalid("a bootstrap token is named %q or %q", BootstrapName, BootstrapName+"@NODE")
	}
	if strings.TrimSpace(secret) == "" {
		return Token{}, invalid("the bootstrap token secret is empty")
	}
	hash := hashSecret(secret)
	var out Token
	err := s.inTx(ctx, func(tx txn) error {
		t, err := tokenWhere(ctx, tx, "secret_hash = ?", hash)
		if err == nil {
			out = t
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		now := s.now()
		n, err := tx.exec(ctx, "UPDATE tokens SET secret_hash = ?, role = ?, max_posture = ?, revoked_at = NULL WHERE name = ?",
			hash, string(RoleAdmin), string(policy.PostureYolo), name)
		if err != nil {
			return fmt.Errorf("store: register bootstrap token: %w", err)
		}
		if n == 0 {
			if err := insertToken(ctx, tx, Token{ID: ids.Sortable("tok_", now), Name: name, Role: RoleAdmin,
				MaxPosture: policy.PostureYolo, CreatedAt: now}, hash); err != nil {
				return err
			}
		}
		out, err = tokenWhere(ctx, tx, "name = ?", name)
		return err
	})
	return out, err
}

// tokenWhere reads the one token matching cond; ErrNotFound when none does.
func tokenWhere(ctx context.Context, q querier, cond string, args ...any) (Token, error) {
	t, _, err := scanToken(q.queryRow(ctx, "SELECT "+tokenCols+" FROM tokens WHERE "+cond, args...))
	if isNoRows(err) {
		return Token{}, fmt.Errorf("store: token: %w", ErrNotFound)
	}
	if err != nil {
		return Token{}, fmt.Errorf("store: read token: %w", err)
	}
	return t, nil
}

// Authenticate finds the valid token whose secret this is. An unknown or
// revoked secret is ErrNotFound either way, so a caller cannot tell which.
// It records the use at most once a minute.
func (s *Store) Authenticate(ctx context.Context, secret string) (Token, error) {
	if secret == "" {
		return Token{}, ErrNotFound
	}
	hash := hashSecret(secret)
	t, stored, err := scanToken(s.db.queryRow(ctx, "SELECT "+tokenCols+" FROM tokens WHERE secret_hash = ?", hash))
	if isNoRows(err) {
		return Token{}, ErrNotFound
	}
	if err != nil {
		return Token{}, fmt.Errorf("store: authenticate: %w", err)
	}
	// The index found the row by its hash; comparing again in constant time
	// keeps the answer independent of how the database compares strings.
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) != 1 || t.Revoked() {
		return Token{}, ErrNotFound
	}
	now := s.now()
	if now.Sub(t.LastUsedAt) >= time.Minute {
		if _, err := s.db.exec(ctx, "UPDATE tokens SET last_used_at = ? WHERE id = ?", micros(now), t.ID); err != nil {
			s.log.Warn("store: record token use", "token", t.Name, "err", err)
		} else {
			t.LastUsedAt = fromMicros(micros(now))
		}
	}
	return t, nil
}

// Tokens lists every token, revoked ones included, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]Token, error) {
	rs, err := s.db.query(ctx, "SELECT "+tokenCols+" FROM tokens ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	defer rs.Close()
	var out []Token
	for rs.Next() {
		t, _, err := scanToken(rs)
		if err != nil {
			return nil, fmt.Errorf("store: list tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes the token with this name or id; the next request with
// its secret is refused. Revoking a revoked token changes nothing and
// returns it as it is. An unknown token is ErrNotFound.
func (s *Store) RevokeToken(ctx context.Context, nameOrID string) (Token, error) {
	var out Token
	err := s.inTx(ctx, func(tx txn) error {
		t, err := tokenWhere(ctx, tx, "name = ? OR id = ?", nameOrID, nameOrID)
		if err != nil {
			return err
		}
		if !t.Revoked() {
			t.RevokedAt = fromMicros(micros(s.now()))
			if _, err := tx.exec(ctx, "UPDATE tokens SET revoked_at = ? WHERE id = ?", micros(t.RevokedAt), t.ID); err != nil {
				return fmt.Errorf("store: revoke token %s: %w", t.Name, err)
			}
		}
		out = t
		return nil
	})
	return out, err
}
