package httpapi_test

import (
	"context"
	"testing"

	"reasonix/runner/store"
)

// TestMemoryRoutes: GET /api/v1/memories lists what the token may see
// (another principal's user memory is hidden, and 404 by id); DELETE
// forgets within the same rule (403 for a workspace memory another saved
// and the token may not forget) and all=true lists the forgotten one.
func TestMemoryRoutes(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	alice := e.as(e.newToken("alice", store.RoleSubmit, ""))
	bob := e.as(e.newToken("bob", store.RoleSubmit, ""))
	mine, _, err := e.st.AddMemory(ctx, store.NewMemory{Scope: store.MemoryScope{Kind: store.MemoryUser, Name: "token:alice"}, Text: "alice likes tabs", By: "token:alice", TaskID: "t_1"})
	if err != nil {
		t.Fatal(err)
	}
	team, _, err := e.st.AddMemory(ctx, store.NewMemory{Scope: store.MemoryScope{Kind: store.MemoryWorkspace, Name: "app"}, Text: "tests run with make check", By: "token:alice"})
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Memories []map[string]any }
	bob.do("GET", "/api/v1/memories", "", nil, &list)
	if len(list.Memories) != 1 || list.Memories[0]["id"] != team.ID || list.Memories[0]["scope"] != "workspace:app" || list.Memories[0]["by"] != "token:alice" {
		t.Fatalf("bob's list = %+v", list)
	}
	alice.do("GET", "/api/v1/memories?scope=user:token:alice", "", nil, &list)
	if len(list.Memories) != 1 || list.Memories[0]["id"] != mine.ID || list.Memories[0]["task_id"] != "t_1" {
		t.Fatalf("alice's user list = %+v", list)
	}
	for _, tc := range []struct {
		who          *env
		method, path string
		status       int
		code         string
	}{
		{bob, "GET", "/api/v1/memories/" + mine.ID, 404, "not_found"},
		{bob, "DELETE", "/api/v1/memories/" + mine.ID, 404, "not_found"},
		{bob, "DELETE", "/api/v1/memories/" + team.ID, 403, "forbidden"},
		{bob, "GET", "/api/v1/memories?scope=team:x", 400, "invalid"},
		{bob, "GET", "/api/v1/memories?all=maybe", 400, "invalid"},
		{bob, "GET", "/api/v1/memories?limit=0", 400, "invalid"},
	} {
		if st, code := tc.who.status(tc.method, tc.path, ""); st != tc.status || code != tc.code {
			t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, st, code, tc.status, tc.code)
		}
	}
	var m map[string]any
	if res := alice.do("DELETE", "/api/v1/memories/"+team.ID, "", nil, &m); res.StatusCode != 200 || m["forgotten_by"] != "token:alice" || m["forgotten_at"] == nil {
		t.Fatalf("forget = %d %+v", res.StatusCode, m)
	}
	bob.do("GET", "/api/v1/memories", "", nil, &list)
	if len(list.Memories) != 0 {
		t.Errorf("after forget, bob's list = %+v", list)
	}
	bob.do("GET", "/api/v1/memories?all=true", "", nil, &list)
	if len(list.Memories) != 1 || list.Memories[0]["forgotten_by"] != "token:alice" {
		t.Errorf("all=true = %+v", list)
	}
}
