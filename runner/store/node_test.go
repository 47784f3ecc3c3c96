package store_test

import (
	"context"
	"testing"
	"time"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestNodes: a node's row is created by its first heartbeat, updated by
// later ones (state, stamp), and listed newest first, on both databases.
func TestNodes(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			s := open(t, store.Config{Now: clk.Now})
			if err := s.BeatNode(ctx, store.Node{}); err == nil {
				t.Fatal("a node without an id was recorded")
			}
			a := store.Node{ID: "a", Version: "1.0", Addr: "10.0.0.1:8080", State: store.NodeRunning, MaxTasks: 8, StartedAt: clk.Now()}
			if err := s.BeatNode(ctx, a); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Minute)
			b := store.Node{ID: "b", Version: "1.1", State: store.NodeRunning, MaxTasks: 4, StartedAt: clk.Now()}
			if err := s.BeatNode(ctx, b); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			a.State = store.NodeDraining
			if err := s.BeatNode(ctx, a); err != nil {
				t.Fatal(err)
			}
			nodes, err := s.Nodes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) != 2 || nodes[0].ID != "b" || nodes[1].ID != "a" {
				t.Fatalf("nodes = %+v", nodes)
			}
			got := nodes[1]
			if got.State != store.NodeDraining || got.Version != "1.0" || got.Addr != "10.0.0.1:8080" || got.MaxTasks != 8 ||
				!got.HeartbeatAt.After(nodes[0].HeartbeatAt) || !got.StartedAt.Equal(a.StartedAt) {
				t.Fatalf("node a = %+v", got)
			}
			if got.Leader || nodes[0].Leader {
				t.Fatal("a leader without a running queue")
			}
			if l, err := s.Leader(ctx); err != nil || l != "" {
				t.Fatalf("leader = %q, %v", l, err)
			}
		})
	}
}

// TestBeatNodeOthers: a heartbeat counts the other nodes alive (not
// stopped, beaten within the window) in its own statement, on both
// databases.
func TestBeatNodeOthers(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			s := open(t, store.Config{Now: clk.Now})
			const window = 30 * time.Second
			beat := func(id string, state store.NodeState) int {
				t.Helper()
				n, err := s.BeatNodeOthers(ctx, store.Node{ID: id, State: state}, window)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := beat("a", store.NodeRunning); n != 0 {
				t.Fatalf("a alone counts %d others", n)
			}
			if n := beat("b", store.NodeRunning); n != 1 {
				t.Fatalf("b counts %d others, want a", n)
			}
			if n := beat("a", store.NodeRunning); n != 1 {
				t.Fatalf("a counts %d others, want b", n)
			}
			if n, err := s.BeatNodeOthers(ctx, store.Node{ID: "a", State: store.NodeRunning}, 0); err != nil || n != 0 {
				t.Fatalf("without a window: %d, %v; want none counted", n, err)
			}
			beat("b", store.NodeStopped)
			if n := beat("a", store.NodeRunning); n != 0 {
				t.Fatalf("a counts %d others; b stopped", n)
			}
			beat("c", store.NodeDraining)
			if n := beat("a", store.NodeRunning); n != 1 {
				t.Fatalf("a counts %d others, want the draining c", n)
			}
			clk.Advance(window + time.Second)
			if n := beat("a", store.NodeRunning); n != 0 {
				t.Fatalf("a counts %d others; c fell silent", n)
			}
		})
	}
}
