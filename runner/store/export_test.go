package store

import (
	"context"
	"fmt"
	"strings"
)

// ExecForTest runs raw SQL, for tests that break the schema on purpose.
func (s *Store) ExecForTest(ctx context.Context, q string) error {
	_, err := s.db.exec(ctx, q)
	return err
}

// CountForTest runs a SELECT COUNT(*) with "?" args.
func (s *Store) CountForTest(ctx context.Context, q string, args ...any) (int, error) {
	var n int
	err := s.db.queryRow(ctx, q, args...).Scan(&n)
	return n, err
}

// JobStateForTest reports the River state of a job.
func (s *Store) JobStateForTest(ctx context.Context, id int64) (string, error) {
	j, err := s.river.jobGet(ctx, id)
	if err != nil {
		return "", err
	}
	return string(j.State), nil
}

// TokenRowForTest returns every column of the token row named name, joined
// as text, for tests that check what is (not) stored.
func (s *Store) TokenRowForTest(ctx context.Context, name string) (string, error) {
	var id, n, role, posture, hash string
	var created int64
	var revoked, used any
	err := s.db.queryRow(ctx, "SELECT "+tokenCols+" FROM tokens WHERE name = ?", name).
		Scan(&id, &n, &role, &posture, &hash, &created, &revoked, &used)
	return strings.Join([]string{id, n, role, posture, hash, fmt.Sprint(created, revoked, used)}, "|"), err
}
