package store

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// querier is the common surface of a pool and a transaction on both
// databases. Queries are written with "?" placeholders; the Postgres side
// rebinds them to $n. None of our SQL contains a literal "?".
type querier interface {
	exec(ctx context.Context, q string, args ...any) (rowsAffected int64, err error)
	query(ctx context.Context, q string, args ...any) (rows, error)
	queryRow(ctx context.Context, q string, args ...any) row
}

// rows is the subset of sql.Rows and pgx.Rows the store uses.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// row is one result row; Scan reports errNoRows when there is none.
type row interface {
	Scan(dest ...any) error
}

// txn is a transaction opened by a db.
type txn interface {
	querier
	commit(ctx context.Context) error
	rollback(ctx context.Context) error
}

// db is a connection pool of one of the two databases.
type db interface {
	querier
	begin(ctx context.Context) (txn, error)
	// lock takes a database-wide exclusive lock named key until unlock is
	// called; other connections of the pool stay usable meanwhile.
	lock(ctx context.Context, key int64) (unlock func(), err error)
	close()
}

// --- SQLite (database/sql) ---

type sqlQuerier interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

type sqlExec struct{ q sqlQuerier }

func (s sqlExec) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := s.q.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s sqlExec) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := s.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

func (s sqlExec) queryRow(ctx context.Context, q string, args ...any) row {
	return sqlRow{s.q.QueryRowContext(ctx, q, args...)}
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if err == sql.ErrNoRows {
		return errNoRows
	}
	return err
}

type sqliteDB struct {
	sqlExec
	pool *sql.DB
}

func (d *sqliteDB) begin(ctx context.Context) (txn, error) {
	tx, err := d.pool.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &sqliteTx{sqlExec{tx}, tx}, nil
}

func (d *sqliteDB) close() { _ = d.pool.Close() }

// lock is a no-op on SQLite: one process owns the file, and each of our
// write transactions already takes the database's write lock at BEGIN.
func (d *sqliteDB) lock(context.Context, int64) (func(), error) { return func() {}, nil }

type sqliteTx struct {
	sqlExec
	tx *sql.Tx
}

func (t *sqliteTx) commit(context.Context) error   { return t.tx.Commit() }
func (t *sqliteTx) rollback(context.Context) error { return t.tx.Rollback() }

// --- Postgres (pgx) ---

type pgExec struct {
	exec_     func(ctx context.Context, q string, args ...any) (int64, error)
	query_    func(ctx context.Context, q string, args ...any) (pgx.Rows, error)
	queryRow_ func(ctx context.Context, q string, args ...any) pgx.Row
}

func (p pgExec) exec(ctx context.Context, q string, args ...any) (int64, error) {
	return p.exec_(ctx, rebind(q), args...)
}

func (p pgExec) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := p.query_(ctx, rebind(q), args...)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (p pgExec) queryRow(ctx context.Context, q string, args ...any) row {
	return pgRow{p.queryRow_(ctx, rebind(q), args...)}
}

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if err == pgx.ErrNoRows {
		return errNoRows
	}
	return err
}

type postgresDB struct {
	pgExec
	pool *pgxpool.Pool
}

func newPostgresDB(pool *pgxpool.Pool) *postgresDB {
	return &postgresDB{pgExec: pgExec{
		exec_: func(ctx context.Context, q string, args ...any) (int64, error) {
			tag, err := pool.Exec(ctx, q, args...)
			return tag.RowsAffected(), err
		},
		query_:    pool.Query,
		queryRow_: pool.QueryRow,
	}, pool: pool}
}

func (d *postgresDB) begin(ctx context.Context) (txn, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &postgresTx{pgExec: pgExec{
		exec_: func(ctx context.Context, q string, args ...any) (int64, error) {
			tag, err := tx.Exec(ctx, q, args...)
			return tag.RowsAffected(), err
		},
		query_:    tx.Query,
		queryRow_: tx.QueryRow,
	}, tx: tx}, nil
}

func (d *postgresDB) close() { d.pool.Close() }

// PoolConns is the Postgres pool a node with workers concurrent tasks
// needs: one connection per running task (a task holds at most one at a
// time), River's LISTEN connection, which it holds for good, its fetches,
// completions and maintenance, and the API's reads. The pool used to be 32
// whatever the workers, and a busy node kept ~21 of them open, so 4–5
// nodes exhausted a default Postgres (max_connections 100); at this size 8
// nodes of 4 workers hold at most 80.
func PoolConns(workers int) int { return max(workers, 1) + 6 }

// sizePool sets the pool's bound (PoolConns(4) when maxConns is 0) and,
// unless the DSN says otherwise, lets idle connections go after a minute,
// so a node that was busy does not keep its peak for the half hour pgx
// would.
func sizePool(cfg *pgxpool.Config, maxConns int) {
	if maxConns <= 0 {
		maxConns = PoolConns(4)
	}
	cfg.MaxConns = int32(min(maxConns, math.MaxInt32))
	if !strings.Contains(cfg.ConnString(), "pool_max_conn_idle_time") {
		cfg.MaxConnIdleTime = time.Minute
	}
}

// lock holds a session advisory lock on one pooled connection.
func (d *postgresDB) lock(ctx context.Context, key int64) (func(), error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		conn.Release()
		return nil, err
	}
	return func() {
		_, err := conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", key)
		if err != nil {
			// A connection that may still hold the lock must not go back
			// to the pool; closing it releases the lock server-side.
			_ = conn.Conn().Close(context.Background())
		}
		conn.Release()
	}, nil
}

type postgresTx struct {
	pgExec
	tx pgx.Tx
}

func (t *postgresTx) commit(ctx context.Context) error   { return t.tx.Commit(ctx) }
func (t *postgresTx) rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }

// rebind turns "?" placeholders into Postgres' "$1", "$2", ….
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}
