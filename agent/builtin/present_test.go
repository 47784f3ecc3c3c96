package builtin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix/agent"
)

func TestPresentRecordsDeliverables(t *testing.T) {
	env, g := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"report.md": "# report\n", "out/data.csv": "a,b\n1,2\n", ".env": "SECRET=x\n"})
	g.hidden[".env"] = true
	var events []agent.Event
	env.Emit = func(e agent.Event) { events = append(events, e) }
	pr := tool(t, env, "present")
	got := mustCall(t, pr, `{"files":[{"path":"report.md","description":"  the   report "},{"path":"out/data.csv"}]}`)
	if !strings.Contains(got, "recorded 2 deliverable(s)") || strings.Contains(got, "a,b") {
		t.Fatalf("result %q", got)
	}
	want := []agent.Deliverable{{Path: "report.md", Description: "the report", Bytes: 9}, {Path: "out/data.csv", Bytes: 8}}
	if len(events) != 1 || events[0].Type != agent.EventDeliverables || !slices.Equal(events[0].Deliverables, want) {
		t.Fatalf("events %+v", events)
	}
	// All or nothing: one bad path records nothing.
	for _, bad := range []struct{ args, want string }{
		{`{"files":[{"path":"report.md"},{"path":"missing.txt"}]}`, "does not exist"},
		{`{"files":[{"path":"out"}]}`, "not a regular file"},
		{`{"files":[{"path":"../elsewhere.txt"}]}`, "files[0]"},
		{`{"files":[{"path":".env"}]}`, "files[0]"},
		{`{"files":[{"path":"report.md"},{"path":"./report.md"}]}`, "listed twice"},
		{`{"files":[]}`, "1 to 8"},
		{`{"files":[{"path":"a"},{"path":"a"},{"path":"a"},{"path":"a"},{"path":"a"},{"path":"a"},{"path":"a"},{"path":"a"},{"path":"a"}]}`, "1 to 8"},
	} {
		wantErr(t, pr, bad.args, bad.want)
	}
	if len(events) != 1 {
		t.Fatalf("a refused declaration emitted: %+v", events[1:])
	}
	if _, err := os.Stat(filepath.Join(env.Workdir, "report.md")); err != nil {
		t.Fatal(err)
	}
}
