package httpapi

import (
	"net/http"
	"time"
)

// nodeJSON is one node in GET /api/v1/nodes.
type nodeJSON struct {
	ID          string    `json:"id"`
	Version     string    `json:"version"`
	Addr        string    `json:"addr,omitempty"`
	State       string    `json:"state"`
	Leader      bool      `json:"leader"`
	Stale       bool      `json:"stale"`
	MaxTasks    int       `json:"max_tasks"`
	Running     []string  `json:"running"`
	StartedAt   time.Time `json:"started_at"`
	HeartbeatAt time.Time `json:"heartbeat_at"`
}

// listNodes is GET /api/v1/nodes: the service processes sharing the
// store, their state, heartbeats, running tasks and version. Any principal
// may read it.
func (a *API) listNodes(w http.ResponseWriter, r *http.Request) {
	nodes, err := a.svc.Nodes(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]nodeJSON, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, nodeJSON{ID: n.ID, Version: n.Version, Addr: n.Addr, State: string(n.State), Leader: n.Leader,
			Stale: n.Stale, MaxTasks: n.MaxTasks, Running: append([]string{}, n.Running...),
			StartedAt: n.StartedAt, HeartbeatAt: n.HeartbeatAt})
	}
	writeJSON(w, http.StatusOK, map[string]any{"nodes": out})
}
