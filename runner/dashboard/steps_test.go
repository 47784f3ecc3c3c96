package dashboard_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"reasonix/runner/store"
)

var stepPre = regexp.MustCompile(`(?s)<pre class="step-detail">(.*?)</pre>`)

// TestLongOutputPaged: a tool's output longer than a page shows its first
// 16 KB on the task page with a link on; the step's own page shows all of
// it, 16 KB a page, escaped, and nothing past the last page.
func TestLongOutputPaged(t *testing.T) {
	e := newEnv(t, bashThenDone())
	b := e.browser()
	b.signIn(e.token("alice", store.RoleApprove))
	taskID, _ := e.parked("token:alice", "long output")
	var out strings.Builder
	for i := 0; out.Len() < 40<<10; i++ {
		fmt.Fprintf(&out, "line %05d <script>x</script> ü\n", i)
	}
	payload, _ := json.Marshal(map[string]any{"tool": "bash", "result": out.String()})
	ev, err := e.st.AppendEvent(t.Context(), taskID, "tool_finished", payload)
	if err != nil {
		t.Fatal(err)
	}

	p := b.get("/tasks/" + taskID)
	link := fmt.Sprintf(`/tasks/%s/steps/%d?page=2`, taskID, ev.Seq)
	if !strings.Contains(p.Body, `href="`+link+`"`) || !strings.Contains(p.Body, "page 1 of 3") {
		t.Fatalf("the task page has no link on to page 2 of 3 (%s)", link)
	}
	if strings.Contains(p.Body, "line 01500") || len(p.Body) > 64<<10 {
		t.Errorf("the task page shows past the first page (%d bytes)", len(p.Body))
	}

	var got strings.Builder
	for n := 1; n <= 3; n++ {
		p := b.get(fmt.Sprintf("/tasks/%s/steps/%d?page=%d", taskID, ev.Seq, n))
		m := stepPre.FindStringSubmatch(p.Body)
		if p.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("page %d = %d:\n%s", n, p.StatusCode, p.Body)
		}
		if strings.Contains(m[1], "<script>") {
			t.Fatalf("page %d shows the output unescaped", n)
		}
		if chunk := html.UnescapeString(m[1]); len(chunk) > 16<<10 {
			t.Errorf("page %d holds %d bytes", n, len(chunk))
		}
		got.WriteString(html.UnescapeString(m[1]))
		if next := fmt.Sprintf("?page=%d\" rel=\"next\"", n+1); strings.Contains(p.Body, next) != (n < 3) {
			t.Errorf("page %d: next link present = %v", n, !(n < 3))
		}
	}
	if got.String() != out.String() {
		t.Errorf("the three pages together are %d bytes, not the %d-byte output", got.Len(), out.Len())
	}
	for _, path := range []string{
		fmt.Sprintf("/tasks/%s/steps/%d?page=4", taskID, ev.Seq),
		fmt.Sprintf("/tasks/%s/steps/%d?page=0", taskID, ev.Seq),
		fmt.Sprintf("/tasks/%s/steps/%d", taskID, ev.Seq+100),
		"/tasks/" + taskID + "/steps/x",
	} {
		if p := b.get(path); p.StatusCode != http.StatusNotFound {
			t.Errorf("%s = %d, want 404", path, p.StatusCode)
		}
	}
	if p := e.browser().get(link); p.StatusCode != http.StatusSeeOther {
		t.Errorf("a step page without signing in = %d, want a redirect to sign in", p.StatusCode)
	}
}
