package dashboard

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"reasonix/goals"
	"reasonix/runner/store"
)

// FuzzNextPage: whatever a sign-in form or link carries as its destination,
// the redirect stays on this site: a path, never a host.
func FuzzNextPage(f *testing.F) {
	for _, s := range []string{"/", "/approvals", "//evil.example", `/\evil`, "https://evil.example/", "/%2F%2Fevil", "/login?next=//x", "", " /x", "/\t/evil"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := nextPage(next)
		if !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.HasPrefix(got, `/\`) {
			t.Fatalf("nextPage(%q) = %q", next, got)
		}
		u, err := url.Parse(got)
		if err == nil && (u.Host != "" || u.Scheme != "") {
			t.Fatalf("nextPage(%q) = %q names a host", next, got)
		}
		// Browsers drop tabs and newlines inside URLs: "/\t/evil" would be "//evil".
		if clean := strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(got); strings.HasPrefix(clean, "//") || strings.HasPrefix(clean, `/\`) {
			t.Fatalf("nextPage(%q) = %q becomes %q in a browser", next, got, clean)
		}
	})
}

// FuzzFleetLayout: a fleet_updated payload (written by the goal
// controller from the model's graph) never breaks the page: no panic, every
// box inside the drawing, one edge per known dependency.
func FuzzFleetLayout(f *testing.F) {
	f.Add(`{"fleet_id":"f1","nodes":[{"id":"a","state":"done"},{"id":"b","state":"running","depends_on":["a"]}]}`)
	f.Add(`{"fleet_id":"f2","nodes":[{"id":"a","depends_on":["b"]},{"id":"b","depends_on":["a"]},{"id":"a","depends_on":["a","zz"]}]}`)
	f.Add(`{"fleet_id":"<x>","nodes":[{"id":"ünïcödé-and-a-very-long-node-identifier"}]}`)
	f.Fuzz(func(t *testing.T, payload string) {
		s, ok := fleetOf(store.Event{Type: string(goals.EventFleetUpdated), Payload: json.RawMessage(payload)})
		if !ok {
			return
		}
		g := layoutFleet(s)
		if len(g.Nodes) != len(s.Nodes) {
			t.Fatalf("%d boxes for %d nodes", len(g.Nodes), len(s.Nodes))
		}
		for _, n := range g.Nodes {
			if n.X < 0 || n.Y < 0 || n.X+nodeW > g.Width || n.Y+nodeH > g.Height {
				t.Fatalf("box %+v outside %dx%d", n, g.Width, g.Height)
			}
			if len([]rune(n.Label)) > 20 {
				t.Fatalf("label %q too long", n.Label)
			}
		}
		if strings.ContainsFunc(g.DomID, func(r rune) bool {
			return !strings.ContainsRune("-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", r)
		}) {
			t.Fatalf("dom id %q", g.DomID)
		}
	})
}

// FuzzLoginCode: only a code of the form store.CreateLoginCode gives ("rxl_"
// and 64 lowercase hex digits) is echoed into the link's page or looked up.
func FuzzLoginCode(f *testing.F) {
	for _, s := range []string{"", "rxl_", "rxl_" + strings.Repeat("a", 64), "rxl_" + strings.Repeat("A", 64),
		"rxl_" + strings.Repeat("0", 63) + "\"", "rxt_" + strings.Repeat("0", 64), "rxl_" + strings.Repeat("f", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if !looksLikeLoginCode(code) {
			return
		}
		if len(code) != len(store.LoginCodePrefix)+64 || !strings.HasPrefix(code, store.LoginCodePrefix) ||
			strings.Trim(code[len(store.LoginCodePrefix):], "0123456789abcdef") != "" {
			t.Fatalf("looksLikeLoginCode(%q) = true", code)
		}
	})
}
