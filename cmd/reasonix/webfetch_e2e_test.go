package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix/agent"
)

// web_fetch in the built binary under yolo: a loopback URL (a site the
// test serves, and the fake model's own server) is refused after
// resolution, and a denied domain is refused by the gate before any
// connection. The model is told why each time.
func TestRunWebFetchRefusesLoopbackAndDeniedDomains(t *testing.T) {
	var hits atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<p>private page</p>")
	}))
	defer site.Close()
	port := site.URL[strings.LastIndex(site.URL, ":")+1:]
	e := newE2E(t,
		toolTurn(call("f1", "web_fetch", fmt.Sprintf(`{"url":%q}`, site.URL+"/x"))),
		toolTurn(call("f2", "web_fetch", `{"url":"http://localhost:`+port+`/x"}`)),
		toolTurn(call("f3", "web_fetch", `{"url":"https://docs.evil.test/page"}`)),
		answer("could not fetch"),
	)
	e.configure("\n[permissions]\ndeny = [\"WebFetch(domain:evil.test)\"]\n")
	stdout, stderr, code := e.run("run", "--permission-mode", "yolo", "read the pages")
	if code != exitOK && code != exitBlocked {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback site was reached %d times", n)
	}
	results := map[string]string{}
	for _, m := range e.srv.Requests()[3].Messages {
		if m.Role == agent.RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	for _, id := range []string{"f1", "f2"} {
		if !strings.Contains(results[id], "refused") || !strings.Contains(results[id], "not public") {
			t.Errorf("%s: the model was told %q", id, results[id])
		}
	}
	if !strings.Contains(results["f3"], "WebFetch(domain:evil.test)") {
		t.Errorf("f3: the model was told %q", results["f3"])
	}
}
