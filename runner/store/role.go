package store

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"
)

// Roles of principals that have no token: chat identities. A token carries
// its own role; a Slack or Telegram user authenticates through its
// platform, and what it may do is granted here.

// AtLeast reports whether r has min's rights: roles are ranked (see Rank)
// and each has the rights of the ones below it; an unknown role has none.
// It is the one comparison of roles: whoever asks "may this role …" asks
// it here rather than comparing names or ranks.
func (r Role) AtLeast(min Role) bool { return r.Rank() > 0 && r.Rank() >= min.Rank() }

// PrincipalRole is a role granted to a chat identity.
type PrincipalRole struct {
	Principal string
	Role      Role
	CreatedAt time.Time
}

// chatPrincipal is the shape of a chat identity: "slack:<team>/<user>" or
// "telegram:<numeric id>", with the platforms' id alphabets. Anything
// else (a token's "token:x", a display name) cannot be granted a role here.
var chatPrincipal = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(slack:[A-Z0-9]{1,32}/[A-Z0-9]{1,32}|telegram:-?[0-9]{1,20})$`)
})

// ValidChatPrincipal reports whether id is a chat identity a role can be
// granted to.
func ValidChatPrincipal(id string) bool { return chatPrincipal().MatchString(id) }

// GrantRole gives principal role, replacing any role it had. A principal
// that is no chat identity, or an unknown role, is an *InputError.
func (s *Store) GrantRole(ctx context.Context, principal string, role Role) (PrincipalRole, error) {
	if !ValidChatPrincipal(principal) {
		return PrincipalRole{}, invalid("%q is not a chat identity: use slack:<team id>/<user id> or telegram:<user id> (tokens carry their own role)", principal)
	}
	if role.Rank() == 0 {
		return PrincipalRole{}, invalid("role %q is not submit, approve, grant or admin", role)
	}
	pr := PrincipalRole{Principal: principal, Role: role, CreatedAt: fromMicros(micros(s.now()))}
	_, err := s.db.exec(ctx, `INSERT INTO principal_roles (principal, role, created_at) VALUES (?, ?, ?)
		ON CONFLICT (principal) DO UPDATE SET role = excluded.role, created_at = excluded.created_at`,
		pr.Principal, string(pr.Role), micros(pr.CreatedAt))
	if err != nil {
		return PrincipalRole{}, fmt.Errorf("store: grant %s to %s: %w", role, principal, err)
	}
	return pr, nil
}

// RevokeRole removes principal's role; ErrNotFound when it had none.
func (s *Store) RevokeRole(ctx context.Context, principal string) error {
	n, err := s.db.exec(ctx, "DELETE FROM principal_roles WHERE principal = ?", principal)
	if err != nil {
		return fmt.Errorf("store: revoke the role of %s: %w", principal, err)
	}
	if n == 0 {
		return fmt.Errorf("store: role of %s: %w", principal, ErrNotFound)
	}
	return nil
}

// RoleOf returns principal's granted role; ErrNotFound when it has none.
func (s *Store) RoleOf(ctx context.Context, principal string) (Role, error) {
	var role string
	err := s.db.queryRow(ctx, "SELECT role FROM principal_roles WHERE principal = ?", principal).Scan(&role)
	if isNoRows(err) {
		return "", fmt.Errorf("store: role of %s: %w", principal, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: role of %s: %w", principal, err)
	}
	return Role(role), nil
}

// PrincipalRoles lists every granted role, by principal.
func (s *Store) PrincipalRoles(ctx context.Context) ([]PrincipalRole, error) {
	rs, err := s.db.query(ctx, "SELECT principal, role, created_at FROM principal_roles ORDER BY principal")
	if err != nil {
		return nil, fmt.Errorf("store: list roles: %w", err)
	}
	defer rs.Close()
	var out []PrincipalRole
	for rs.Next() {
		var (
			pr      PrincipalRole
			role    string
			created int64
		)
		if err := rs.Scan(&pr.Principal, &role, &created); err != nil {
			return nil, fmt.Errorf("store: list roles: %w", err)
		}
		pr.Role, pr.CreatedAt = Role(role), fromMicros(created)
		out = append(out, pr)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list roles: %w", err)
	}
	return out, nil
}
