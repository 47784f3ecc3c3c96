package httpapi

import (
	"net/http"

	"reasonix/runner/apitype"
)

// listNodes is GET /api/v1/nodes: the service processes sharing the
// store, their state, heartbeats, running tasks and version. Any principal
// may read it.
func (a *API) listNodes(w http.ResponseWriter, r *http.Request) {
	nodes, err := a.svc.Nodes(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]apitype.Node, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, ViewNode(n))
	}
	writeJSON(w, http.StatusOK, apitype.NodeList{Nodes: out})
}

// listWorkspaces is GET /api/v1/workspaces: the configured workspaces, for
// a client that maps a checkout to one (`reasonix acp --server`). Any
// principal may read it; it holds no credentials.
func (a *API) listWorkspaces(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, apitype.WorkspaceList{Workspaces: a.svc.WorkspaceList()})
}
