package httpapi_test

import (
	"errors"
	"testing"

	"reasonix/internal/eventually"
	"reasonix/runner/store"
)

// GET /api/v1/nodes lists this node, running and (once River elected it)
// the leader, with its heartbeat; it needs a token like every API route.
func TestNodesRoute(t *testing.T) {
	e := newEnv(t, nil)
	if code, _ := e.as("wrong").status("GET", "/api/v1/nodes", ""); code != 401 {
		t.Fatalf("without a valid token: %d", code)
	}
	reader := e.as(e.newToken("reader", store.RoleSubmit, ""))
	eventually.NoError(t, 0, func() error {
		var out struct {
			Nodes []struct {
				ID, State   string
				Leader      bool
				Stale       bool
				MaxTasks    int `json:"max_tasks"`
				Running     []string
				HeartbeatAt string `json:"heartbeat_at"`
			}
		}
		if res := reader.do("GET", "/api/v1/nodes", "", nil, &out); res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
		if len(out.Nodes) != 1 {
			t.Fatalf("nodes = %+v", out.Nodes)
		}
		n := out.Nodes[0]
		if n.ID != e.svc.Node() || n.State != "running" || n.Stale || n.MaxTasks != 2 || n.Running == nil || n.HeartbeatAt == "" {
			t.Fatalf("node = %+v", n)
		}
		if !n.Leader {
			return errors.New("not elected yet")
		}
		return nil
	})
}
