package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"reasonix/internal/eventually"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"

	"github.com/jackc/pgx/v5"
)

// TestPostgresEightNodesShareADefaultServer: eight nodes with the default
// pool and four workers each run a burst of tasks on one Postgres while
// holding fewer connections than a default server allows (max_connections
// 100, three of them reserved for superusers): every task completes and
// the connections the nodes hold never exceed eight pools.
func TestPostgresEightNodesShareADefaultServer(t *testing.T) {
	const nodes, workers, perNode = 8, 4, 6
	if limit := nodes * store.PoolConns(workers); limit > 97 {
		t.Fatalf("%d nodes may hold %d connections, more than a default Postgres allows", nodes, limit)
	}
	ctx := context.Background()
	var b [4]byte
	_, _ = rand.Read(b[:])
	app := "rx_pool_" + hex.EncodeToString(b[:])
	dsn := storetest.PostgresDSN(t) + "&application_name=" + app
	var mu sync.Mutex
	done := map[string]bool{}
	var stores []*store.Store
	for i := range nodes {
		s, err := store.Open(ctx, store.Config{Driver: store.DriverPostgres, DSN: dsn, Logger: storetest.Quiet()})
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		t.Cleanup(s.Close)
		stores = append(stores, s)
		q, err := s.NewQueue(store.QueueConfig{
			MaxWorkers: workers, ID: fmt.Sprintf("node-%d", i),
			Handler: store.HandlerFunc(func(ctx context.Context, job store.Job) error {
				for range 3 { // a few statements, as a step makes
					if _, err := s.Task(ctx, job.TaskID); err != nil {
						return err
					}
				}
				mu.Lock()
				done[job.TaskID] = true
				mu.Unlock()
				return nil
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := q.Stop(stopCtx); err != nil {
				t.Errorf("Stop: %v", err)
			}
		})
	}
	watch, err := pgx.Connect(ctx, storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	peak := 0
	held := func() {
		var n int
		if err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, n)
	}
	var ids []string
	for i := range nodes * perNode {
		ids = append(ids, mustCreate(t, stores[i%nodes], newTask(fmt.Sprintf("task %d", i)), "").ID)
	}
	eventually.NoError(t, 0, func() error {
		held()
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if !done[id] {
				return fmt.Errorf("task %s has not run", id)
			}
		}
		return nil
	})
	held()
	t.Logf("%d nodes ran %d tasks holding at most %d connections (bound %d)", nodes, len(ids), peak, nodes*store.PoolConns(workers))
	if peak > nodes*store.PoolConns(workers) {
		t.Errorf("the nodes held %d connections, more than %d pools of %d", peak, nodes, store.PoolConns(workers))
	}
}
