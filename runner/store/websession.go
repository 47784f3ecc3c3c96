package store

import (
	"context"
	"fmt"
	"time"

	"reasonix/internal/ids"
)

// WebSession is a signed-in dashboard session: the token whose principal
// signed in, read afresh on every lookup so a revoked token or a changed
// role takes effect at once. CSRF is the token every state-changing request
// of the session must carry.
type WebSession struct {
	Token     Token
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// LoginCodePrefix starts every one-time login code, so a leaked one is
// recognisable.
const LoginCodePrefix = "rxl_"

// CreateLoginCode returns a single-use code that signs in as the valid
// token called tokenName until ttl has passed. Only the code's hash is
// kept. An unknown or revoked token is ErrNotFound.
func (s *Store) CreateLoginCode(ctx context.Context, tokenName string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		return "", invalid("a login code needs a positive lifetime")
	}
	t, err := tokenWhere(ctx, s.db, "name = ?", tokenName)
	if err != nil {
		return "", err
	}
	if t.Revoked() {
		return "", fmt.Errorf("store: token %s is revoked: %w", tokenName, ErrNotFound)
	}
	code, now := LoginCodePrefix+ids.Hex(32), s.now()
	if _, err := s.db.exec(ctx, "INSERT INTO login_codes (code_hash, token_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
		hashSecret(code), t.ID, micros(now), micros(now.Add(ttl))); err != nil {
		return "", fmt.Errorf("store: create login code: %w", err)
	}
	return code, nil
}

// ConsumeLoginCode marks code used and returns its token. A code that is
// unknown, used already, expired, or whose token was revoked since is
// ErrNotFound, whichever it is; of two concurrent uses exactly one wins.
func (s *Store) ConsumeLoginCode(ctx context.Context, code string) (Token, error) {
	if code == "" {
		return Token{}, ErrNotFound
	}
	var out Token
	err := s.inTx(ctx, func(tx txn) error {
		now := micros(s.now())
		var tokenID string
		err := tx.queryRow(ctx, "SELECT token_id FROM login_codes WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?",
			hashSecret(code), now).Scan(&tokenID)
		if isNoRows(err) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("store: read login code: %w", err)
		}
		n, err := tx.exec(ctx, "UPDATE login_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL", now, hashSecret(code))
		if err != nil {
			return fmt.Errorf("store: use login code: %w", err)
		}
		if n != 1 {
			return ErrNotFound
		}
		t, err := tokenWhere(ctx, tx, "id = ?", tokenID)
		if err != nil {
			return err
		}
		if t.Revoked() {
			return ErrNotFound
		}
		out = t
		return nil
	})
	return out, err
}

// CreateWebSession starts a session for token t lasting ttl and returns its
// secret (for the cookie; only its hash is kept) and the session.
func (s *Store) CreateWebSession(ctx context.Context, t Token, ttl time.Duration) (string, WebSession, error) {
	if ttl <= 0 {
		return "", WebSession{}, invalid("a session needs a positive lifetime")
	}
	secret, now := ids.Hex(32), s.now()
	ws := WebSession{Token: t, CSRF: ids.Hex(32), CreatedAt: fromMicros(micros(now)), ExpiresAt: fromMicros(micros(now.Add(ttl)))}
	if _, err := s.db.exec(ctx, "INSERT INTO web_sessions (secret_hash, token_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
		hashSecret(secret), t.ID, ws.CSRF, micros(ws.CreatedAt), micros(ws.ExpiresAt)); err != nil {
		return "", WebSession{}, fmt.Errorf("store: create web session: %w", err)
	}
	return secret, ws, nil
}

// WebSessionBySecret returns the live session whose cookie secret this is.
// An unknown or expired session, or one whose token was revoked, is
// ErrNotFound.
func (s *Store) WebSessionBySecret(ctx context.Context, secret string) (WebSession, error) {
	if secret == "" {
		return WebSession{}, ErrNotFound
	}
	var (
		ws               WebSession
		tokenID          string
		created, expires int64
	)
	err := s.db.queryRow(ctx, "SELECT token_id, csrf, created_at, expires_at FROM web_sessions WHERE secret_hash = ? AND expires_at > ?",
		hashSecret(secret), micros(s.now())).Scan(&tokenID, &ws.CSRF, &created, &expires)
	if isNoRows(err) {
		return WebSession{}, ErrNotFound
	}
	if err != nil {
		return WebSession{}, fmt.Errorf("store: read web session: %w", err)
	}
	t, err := tokenWhere(ctx, s.db, "id = ?", tokenID)
	if err != nil {
		return WebSession{}, err
	}
	if t.Revoked() {
		return WebSession{}, ErrNotFound
	}
	ws.Token, ws.CreatedAt, ws.ExpiresAt = t, fromMicros(created), fromMicros(expires)
	return ws, nil
}

// DeleteWebSession ends the session (sign-out) and, while at it, forgets
// expired sessions and login codes. Ending an unknown session is no error.
func (s *Store) DeleteWebSession(ctx context.Context, secret string) error {
	now := micros(s.now())
	if _, err := s.db.exec(ctx, "DELETE FROM web_sessions WHERE secret_hash = ? OR expires_at <= ?", hashSecret(secret), now); err != nil {
		return fmt.Errorf("store: end web session: %w", err)
	}
	if _, err := s.db.exec(ctx, "DELETE FROM login_codes WHERE expires_at <= ?", now); err != nil {
		return fmt.Errorf("store: forget login codes: %w", err)
	}
	return nil
}
