package store

import (
	"context"
	"sync/atomic"
)

// CountStatementsForTest makes the store count the statements it sends
// (BEGIN and COMMIT included) until stop, and returns the counter. Call
// it while no other goroutine uses the store; the queue's own writes in
// a transaction (CreateTask's job) do not work while counting.
func (s *Store) CountStatementsForTest() (n *atomic.Int64, stop func()) {
	n = new(atomic.Int64)
	plain := s.db
	s.db = countingDB{db: plain, n: n}
	return n, func() { s.db = plain }
}

type countingDB struct {
	db
	n *atomic.Int64
}

func (c countingDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	c.n.Add(1)
	return c.db.exec(ctx, q, args...)
}

func (c countingDB) query(ctx context.Context, q string, args ...any) (rows, error) {
	c.n.Add(1)
	return c.db.query(ctx, q, args...)
}

func (c countingDB) queryRow(ctx context.Context, q string, args ...any) row {
	c.n.Add(1)
	return c.db.queryRow(ctx, q, args...)
}

func (c countingDB) begin(ctx context.Context) (txn, error) {
	c.n.Add(1)
	tx, err := c.db.begin(ctx)
	if err != nil {
		return nil, err
	}
	return countingTx{txn: tx, n: c.n}, nil
}

type countingTx struct {
	txn
	n *atomic.Int64
}

func (c countingTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	c.n.Add(1)
	return c.txn.exec(ctx, q, args...)
}

func (c countingTx) query(ctx context.Context, q string, args ...any) (rows, error) {
	c.n.Add(1)
	return c.txn.query(ctx, q, args...)
}

func (c countingTx) queryRow(ctx context.Context, q string, args ...any) row {
	c.n.Add(1)
	return c.txn.queryRow(ctx, q, args...)
}

func (c countingTx) commit(ctx context.Context) error {
	c.n.Add(1)
	return c.txn.commit(ctx)
}

func (c countingTx) rollback(ctx context.Context) error {
	c.n.Add(1)
	return c.txn.rollback(ctx)
}
