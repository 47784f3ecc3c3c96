package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"reasonix/runner/apitype"
)

// Ids as the service makes them: a kind prefix and 26 characters.
const (
	taskA = "t_01m8s0000000000000000000aa" // shares "t_01m8s" with taskB
	taskB = "t_01m8s1111111111111111111bb"
	taskC = "t_01q2r2222222222222222222cc"
	apprA = "a_01m8s3333333333333333333aa"
	apprB = "a_01m8t4444444444444444444bb"
)

// prefixAPI is a service API that pages tasks by id as the real one does
// ("id < cursor", newest first) and records the ids requests named.
type prefixAPI struct {
	*httptest.Server
	mu    sync.Mutex
	named []string
}

func newPrefixAPI(t *testing.T) *prefixAPI {
	t.Helper()
	f := &prefixAPI{}
	tasks := []string{taskC, taskB, taskA} // newest first
	approvals := []string{apprB, apprA}
	name := func(id string) {
		f.mu.Lock()
		f.named = append(f.named, id)
		f.mu.Unlock()
	}
	notFound := func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"code":"not_found","message":"not found"}`)
	}
	task := func(id string) map[string]any {
		return map[string]any{"id": id, "state": "running", "source": "cli", "prompt": "a prompt for " + id,
			"created_at": time.Now().Add(-3 * time.Minute)}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/tasks", func(w http.ResponseWriter, r *http.Request) {
		var page []map[string]any
		for _, id := range tasks {
			if c := r.URL.Query().Get("cursor"); c == "" || id < c {
				page = append(page, task(id))
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"tasks": page})
	})
	mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		name(id)
		if !slices.Contains(tasks, id) {
			notFound(w)
			return
		}
		json.NewEncoder(w).Encode(task(id))
	})
	for verb, state := range map[string]string{"cancel": "cancelled", "resume": "queued", "messages": "running"} {
		mux.HandleFunc("POST /api/v1/tasks/{id}/"+verb, func(w http.ResponseWriter, r *http.Request) {
			id := r.PathValue("id")
			name(id)
			if !slices.Contains(tasks, id) {
				notFound(w)
				return
			}
			fmt.Fprintf(w, `{"id":%q,"state":%q}`, id, state)
		})
	}
	mux.HandleFunc("GET /api/v1/approvals", func(w http.ResponseWriter, r *http.Request) {
		var list []map[string]any
		for _, id := range approvals {
			list = append(list, map[string]any{"id": id, "task_id": taskA, "tool": "bash", "subject": "go test", "state": "pending"})
		}
		json.NewEncoder(w).Encode(map[string]any{"approvals": list})
	})
	mux.HandleFunc("POST /api/v1/approvals/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		name(id)
		fmt.Fprintf(w, `{"id":%q,"task_id":%q,"decision":"allow_once","decided_by":"token:erin"}`, id, taskA)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REASONIX_HOME", home)
	t.Setenv("REASONIX_API_TOKEN", "tok")
	t.Setenv("NO_COLOR", "")
	return f
}

// TestIDPrefixes: every command that takes a task or approval id takes a
// unique prefix of it (with or without its kind); an ambiguous one is a
// usage error listing the matches and names nothing to the service; an
// unknown one says it is not found.
func TestIDPrefixes(t *testing.T) {
	api := newPrefixAPI(t)
	for _, tc := range []struct {
		args   []string
		want   string // in stdout
		target string // the id the service was asked about
	}{
		{[]string{"tasks", "show", "t_01m8s1"}, "task      " + taskB, taskB},
		{[]string{"tasks", "show", "01Q"}, "task      " + taskC, taskC},
		{[]string{"tasks", "cancel", "t_01m8s0"}, "task " + taskA + ": cancelled", taskA},
		{[]string{"tasks", "resume", "t_01m8s1"}, "task " + taskB + ": queued", taskB},
		{[]string{"tasks", "message", "t_01q", "use", "v2"}, "task " + taskC + ": running", taskC},
		{[]string{"tasks", "show", taskA}, "task      " + taskA, taskA},
		{[]string{"approvals", "allow", "a_01m8t"}, "approval " + apprB + ": allow_once", apprB},
		{[]string{"approvals", "deny", "01m8s"}, "approval " + apprA, apprA},
	} {
		api.mu.Lock()
		api.named = nil
		api.mu.Unlock()
		out, stderr, code := cliRun(append(tc.args, "--server", api.URL)...)
		api.mu.Lock()
		named := slices.Clone(api.named)
		api.mu.Unlock()
		if code != exitOK || !strings.Contains(out, tc.want) || !slices.Equal(named, []string{tc.target}) {
			t.Errorf("%v: exit %d, asked about %v (want %s)\nstdout %q\nstderr %q", tc.args, code, named, tc.target, out, stderr)
		}
	}

	for _, args := range [][]string{{"tasks", "show", "t_01m8s"}, {"tasks", "cancel", "t_01m"}, {"approvals", "allow", "a_01m8"}} {
		api.mu.Lock()
		api.named = nil
		api.mu.Unlock()
		_, stderr, code := cliRun(append(args, "--server", api.URL)...)
		want := []string{taskB, taskA}
		if args[0] == "approvals" {
			want = []string{apprB, apprA}
		}
		api.mu.Lock()
		named := slices.Clone(api.named)
		api.mu.Unlock()
		if code != exitUsage || !strings.Contains(stderr, "matches more than one") || !strings.Contains(stderr, want[0]+"\n  "+want[1]) || len(named) != 0 {
			t.Errorf("%v: exit %d, asked about %v, stderr %q", args, code, named, stderr)
		}
	}

	_, stderr, code := cliRun("tasks", "show", "t_zzz", "--server", api.URL)
	if code != exitFailed || stderr != "reasonix: task t_zzz not found\n" {
		t.Errorf("unknown prefix: exit %d, stderr %q", code, stderr)
	}
}

// TestTasksListFitsTheTerminal: every line of `tasks list` fits the
// width COLUMNS gives (stdout is not a terminal here), 80 without it,
// with the id whole and the prompt cut short with "…", never wrapped;
// --json is the same whatever the width.
func TestTasksListFitsTheTerminal(t *testing.T) {
	api := newPrefixAPI(t)
	var jsonAt []string
	for _, c := range []struct {
		columns string
		width   int
		cut     bool // the prompt ("a prompt for <id>", 41 columns) is cut
		source  bool // the SOURCE column is shown
	}{{"", 80, true, true}, {"60", 60, true, false}, {"80", 80, true, true}, {"160", 160, false, true}, {"junk", 80, true, true}} {
		t.Setenv("COLUMNS", c.columns)
		out, stderr, code := cliRun("tasks", "list", "--server", api.URL)
		if code != exitOK {
			t.Fatalf("COLUMNS=%q: exit %d: %s", c.columns, code, stderr)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "PROMPT") ||
			strings.Contains(lines[0], "SOURCE") != c.source {
			t.Fatalf("COLUMNS=%q: tasks list:\n%s", c.columns, out)
		}
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n > c.width {
				t.Errorf("COLUMNS=%q: line %d is %d columns: %q", c.columns, i, n, l)
			}
		}
		for i, id := range []string{taskC, taskB, taskA} {
			l := lines[i+1]
			if !strings.HasPrefix(l, id+"  ") || !strings.Contains(l, "running") || !strings.Contains(l, "a prompt") ||
				strings.HasSuffix(l, "…") != c.cut || (!c.cut && !strings.HasSuffix(l, "a prompt for "+id)) {
				t.Errorf("COLUMNS=%q: row %d: %q", c.columns, i+1, l)
			}
			if c.width == 80 && !strings.Contains(l, "3m ago") {
				t.Errorf("COLUMNS=%q: row %d lacks its age: %q", c.columns, i+1, l)
			}
		}
		js, _, _ := cliRun("tasks", "list", "--json", "--server", api.URL)
		jsonAt = append(jsonAt, regexp.MustCompile(`"created_at":"[^"]*"`).ReplaceAllString(js, ""))
	}
	for _, js := range jsonAt[1:] {
		if js != jsonAt[0] {
			t.Errorf("--json changes with the width:\n%s\n%s", jsonAt[0], js)
		}
	}
}

// TestTaskTableNeverWraps: state, source and age columns as wide as they
// get and prompts with newlines, tabs and wide characters still give
// lines within the width, the id whole down to 40 columns.
func TestTaskTableNeverWraps(t *testing.T) {
	now := time.Now()
	tasks := []apitype.Task{
		{ID: "t_01m8t0000000000000000000aa", State: "waiting_approval", Source: "telegram", CreatedAt: now.Add(-49 * time.Hour),
			Prompt: "修复 store 包里不稳定的测试，然后更新变更日志" + strings.Repeat("。", 80)},
		{ID: "t_01m8t0000000000000000000ab", State: "budget_exhausted", Source: "schedule", CreatedAt: now,
			Prompt: "line one\twith a tab\nline two"},
	}
	for _, width := range []int{40, 60, 80, 120, 160, 300} {
		var b strings.Builder
		writeTaskTable(&b, tasks, now, width)
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("width %d: %d lines:\n%s", width, len(lines), b.String())
		}
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n > width || strings.ContainsAny(l, "\t\r") {
				t.Errorf("width %d: line %d is %d columns or holds a control character: %q", width, i, n, l)
			}
			if i > 0 && !strings.HasPrefix(l, tasks[i-1].ID+"  ") {
				t.Errorf("width %d: the id is not whole: %q", width, l)
			}
		}
		if width >= 120 && (!strings.Contains(lines[1], "telegram") || !strings.Contains(lines[2], "line one with a tab")) {
			t.Errorf("width %d: a wide table lost a column or the prompt:\n%s", width, b.String())
		}
		if width == 300 && (strings.HasSuffix(lines[1], "…") || !strings.HasSuffix(lines[2], "line one with a tab …")) {
			t.Errorf("width 300: a prompt that fits is cut, or a second line is not marked:\n%s", b.String())
		}
	}
}

// TestApprovalsJSON: `approvals list` and `approvals show` print the
// service's JSON with --json.
func TestApprovalsJSON(t *testing.T) {
	api := newPrefixAPI(t)
	out, stderr, code := cliRun("approvals", "list", "--json", "--server", api.URL)
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &list); code != exitOK || err != nil || len(list) != 2 || list[0].ID != apprB {
		t.Errorf("approvals list --json: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	out, stderr, code = cliRun("approvals", "show", "a_01m8s", "--json", "--server", api.URL)
	var one struct{ ID, Tool string }
	if err := json.Unmarshal([]byte(out), &one); code != exitOK || err != nil || one.ID != apprA || one.Tool != "bash" {
		t.Errorf("approvals show --json: exit %d, %v\n%s%s", code, err, out, stderr)
	}
}
