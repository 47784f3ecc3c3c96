package goals

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/policy"
)

// kids is a ChildFactory whose children play scripted turns by item id.
type kids struct {
	mu        sync.Mutex
	scripts   map[string][]agenttest.Turn
	providers map[string]*agenttest.ScriptedProvider
	specs     []ChildSpec
	tools     func(spec ChildSpec) *agent.ToolRegistry
	gate      agent.Gate
}

func newKids(scripts map[string][]agenttest.Turn) *kids {
	return &kids{scripts: scripts, providers: map[string]*agenttest.ScriptedProvider{}}
}

func (k *kids) NewChild(_ context.Context, spec ChildSpec) (agent.Config, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.specs = append(k.specs, spec)
	key := spec.ID // nested children are scripted as id@depth
	if spec.Depth > 1 {
		key += "@" + itoa(spec.Depth)
	}
	script, ok := k.scripts[key]
	if !ok {
		script = []agenttest.Turn{say("answer of " + spec.ID)}
	}
	p := agenttest.NewScriptedProvider(script...)
	k.providers[key] = p
	reg := agent.NewToolRegistry()
	if k.tools != nil {
		reg = k.tools(spec)
	}
	return agent.Config{Provider: p, Tools: reg, SystemPrompt: "child of profile " + spec.Profile, Gate: k.gate}, nil
}

func (k *kids) started() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var ids []string
	for _, s := range k.specs {
		ids = append(ids, s.ID)
	}
	return ids
}

func (k *kids) firstMessage(id string) string {
	k.mu.Lock()
	p := k.providers[id]
	k.mu.Unlock()
	return p.Requests()[0].Messages[1].Content
}

func newHost(t testing.TB, k ChildFactory, cfg HostConfig) (*Host, *events) {
	t.Helper()
	ev := &events{}
	cfg.Factory = k
	if cfg.Workdir == "" {
		cfg.Workdir = t.TempDir()
	}
	cfg.Observer = ev.observe
	h, err := NewHost(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, ev
}

func mustGraph(t testing.TB, spec string) *Graph {
	t.Helper()
	g, err := ParseFleet([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func states(res FleetResult) map[string]NodeStatus {
	out := map[string]NodeStatus{}
	for _, n := range res.Nodes {
		out[n.ID] = n
	}
	return out
}

func TestPreflightRejectsBadGraphsBeforeAnythingStarts(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"too few", `{"items":[{"prompt":"a"}]}`, "2 to 64 items, got 1"},
		{"duplicate id", `{"items":[{"id":"a","prompt":"x"},{"id":"a","prompt":"y"}]}`, `duplicate id "a" (items 1 and 2)`},
		{"default id duplicate", `{"items":[{"prompt":"x"},{"id":"1","prompt":"y"}]}`, `duplicate id "1"`},
		{"unknown id", `{"items":[{"id":"a","prompt":"x","depends_on":["zz"]},{"id":"b","prompt":"y"}]}`, `item "a" depends on "zz", which no item declares`},
		{"self edge", `{"items":[{"id":"a","prompt":"x","depends_on":["a"]},{"id":"b","prompt":"y"}]}`, `item "a" depends on itself`},
		{"cycle", `{"items":[{"id":"a","prompt":"x","depends_on":["c"]},{"id":"b","prompt":"y","depends_on":["a"]},{"id":"c","prompt":"z","depends_on":["b"]},{"id":"d","prompt":"w"}]}`, `cycle: "`},
		{"dependency twice", `{"items":[{"id":"a","prompt":"x"},{"id":"b","prompt":"y","depends_on":["a","a"]}]}`, "twice"},
		{"no prompt", `{"items":[{"id":"a"},{"id":"b","prompt":"y"}]}`, `"a") has no prompt`},
		{"adopt with prompt", `{"items":[{"id":"a","adopt_ref":"sa-1","prompt":"x"},{"id":"b","prompt":"y"}]}`, "must be empty"},
		{"write path escapes", `{"items":[{"prompt":"x","write_paths":["../etc"]},{"prompt":"y"}]}`, "inside the workspace"},
		{"absolute write path", `{"items":[{"prompt":"x","write_paths":["/etc"]},{"prompt":"y"}]}`, "inside the workspace"},
		{"unknown field", `{"items":[{"prompt":"x","when":"always"},{"prompt":"y"}]}`, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFleet([]byte(tc.spec))
			if !errors.Is(err, ErrPreflight) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
	_, err := ParseFleet([]byte(`{"items":[{"id":"a","prompt":"x","depends_on":["b"]},{"id":"b","prompt":"y","depends_on":["a"]}]}`))
	if err == nil || !strings.Contains(err.Error(), `"a" -> "b" -> "a"`) && !strings.Contains(err.Error(), `"b" -> "a" -> "b"`) {
		t.Fatalf("cycle message %v", err)
	}
	// The fleet tool refuses before any child is built.
	k := newKids(nil)
	h, _ := newHost(t, k, HostConfig{})
	if _, err := (fleetTool{h: h}).Execute(t.Context(), json.RawMessage(`{"items":[{"id":"a","prompt":"x","depends_on":["a"]},{"id":"b","prompt":"y"}]}`)); err == nil {
		t.Fatal("the fleet tool accepted a self-edge")
	}
	if len(k.started()) != 0 {
		t.Fatalf("children started: %v", k.started())
	}
}

// barrier releases its callers once n of them have arrived, so a test can
// prove that n children run at the same time without sleeping.
type barrier struct {
	mu      sync.Mutex
	n       int
	release chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, release: make(chan struct{})} }

// arrive reports whether everyone met before the test's deadline.
func (b *barrier) arrive(deadline <-chan struct{}) bool {
	b.mu.Lock()
	b.n--
	if b.n == 0 {
		close(b.release)
	}
	b.mu.Unlock()
	select {
	case <-b.release:
		return true
	case <-deadline:
		return false
	}
}

func TestDiamondRunsInDependencyOrderWithTheMiddleInParallel(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	meet := newBarrier(2)
	middle := func(name string) []agenttest.Turn {
		return []agenttest.Turn{agenttest.Respond(func(agenttest.Request) agenttest.Turn {
			if !meet.arrive(ctx.Done()) {
				return say(name + " ran alone")
			}
			return say(name + " done")
		})}
	}
	k := newKids(map[string][]agenttest.Turn{
		"research": {say("research findings")},
		"backend":  middle("backend"),
		"frontend": middle("frontend"),
	})
	h, ev := newHost(t, k, HostConfig{})
	g := mustGraph(t, `{"items":[
		{"id":"research","prompt":"study","write_paths":["notes"]},
		{"id":"backend","prompt":"build the API","depends_on":["research"],"write_paths":["api"]},
		{"id":"frontend","prompt":"build the UI","depends_on":["research"],"write_paths":["ui"]},
		{"id":"integration","prompt":"test both","depends_on":["backend","frontend"],"write_paths":["tests"]},
		{"id":"review","prompt":"review","depends_on":["integration"]}]}`)
	res, err := h.RunFleet(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if res.Answered != 5 {
		t.Fatalf("answered %d: %+v", res.Answered, res.Nodes)
	}
	st := states(res)
	if !strings.Contains(st["backend"].Summary, "backend done") || !strings.Contains(st["frontend"].Summary, "frontend done") {
		t.Fatalf("the middle nodes did not meet: %q / %q", st["backend"].Summary, st["frontend"].Summary)
	}
	order := k.started()
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	if pos["research"] != 0 || pos["integration"] != 3 || pos["review"] != 4 {
		t.Fatalf("start order %v", order)
	}
	up := k.firstMessage("integration")
	b, f := strings.Index(up, `<result id="backend">`), strings.Index(up, `<result id="frontend">`)
	if !strings.HasPrefix(up, "<workspace-context>") || b < 0 || f < b || !strings.Contains(up, "backend done") || strings.Contains(up, "research findings") {
		t.Fatalf("integration's upstream block: %q", up)
	}
	if strings.Contains(k.firstMessage("research"), "<upstream-results>") {
		t.Fatal("a root node got upstream results")
	}
	// One snapshot shows both middle nodes running; every snapshot has every node.
	both := false
	for _, e := range ev.of(EventFleetUpdated) {
		snap := e.Data.(FleetSnapshot)
		if len(snap.Nodes) != 5 {
			t.Fatalf("snapshot with %d nodes", len(snap.Nodes))
		}
		if snap.Nodes[1].State == NodeRunning && snap.Nodes[2].State == NodeRunning {
			both = true
		}
	}
	if !both {
		t.Fatal("no snapshot shows backend and frontend running together")
	}
	if c := h.Counters(); c.SubagentRuns != 5 {
		t.Fatalf("counters %+v", c)
	}
	if n := len(ev.of(EventSubagentStarted)); n != 5 {
		t.Fatalf("%d subagent_started events", n)
	}
}

func TestFailureSkipsItsBranchWithTheReasonWhileAnIndependentBranchCompletes(t *testing.T) {
	k := newKids(map[string][]agenttest.Turn{"a": {agenttest.Fail(503, "overloaded", 0)}})
	h, _ := newHost(t, k, HostConfig{})
	res, err := h.RunFleet(t.Context(), mustGraph(t, `{"items":[
		{"id":"a","prompt":"x"},{"id":"b","prompt":"y","depends_on":["a"]},{"id":"c","prompt":"z","depends_on":["b"]},
		{"id":"d","prompt":"w"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	st := states(res)
	if st["a"].State != NodeFailed || st["a"].Reason != "provider.transient" {
		t.Fatalf("a: %+v", st["a"])
	}
	for _, id := range []string{"b", "c"} {
		if st[id].State != NodeSkipped || st[id].Reason != "provider.transient" {
			t.Fatalf("%s: %+v", id, st[id])
		}
	}
	if st["d"].State != NodeDone || res.Answered != 1 {
		t.Fatalf("d: %+v answered %d", st["d"], res.Answered)
	}
	out := h.aggregate(res)
	if !strings.HasPrefix(out, res.FleetID+": 1 of 4 tasks answered") || !strings.Contains(out, "## b: skipped reason=provider.transient") {
		t.Fatalf("aggregate:\n%s", out)
	}
}

func TestFailFastStopsStartingNewItems(t *testing.T) {
	k := newKids(map[string][]agenttest.Turn{"a": {agenttest.ContextTooLong()}})
	h, _ := newHost(t, k, HostConfig{MaxConcurrency: 1})
	res, err := h.RunFleet(t.Context(), mustGraph(t, `{"fail_fast":true,"items":[{"id":"a","prompt":"x"},{"id":"d","prompt":"w"},{"id":"e","prompt":"v"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	st := states(res)
	if st["a"].State != NodeFailed || st["a"].Reason != "context.exhausted" {
		t.Fatalf("a: %+v", st["a"])
	}
	for _, id := range []string{"d", "e"} {
		if st[id].State != NodeSkipped || !strings.Contains(st[id].Summary, "fail_fast") {
			t.Fatalf("%s: %+v", id, st[id])
		}
	}
	if got := k.started(); len(got) != 1 {
		t.Fatalf("started %v", got)
	}
	// Without fail_fast the independent items run.
	k = newKids(map[string][]agenttest.Turn{"a": {agenttest.ContextTooLong()}})
	h, _ = newHost(t, k, HostConfig{MaxConcurrency: 1})
	res, _ = h.RunFleet(t.Context(), mustGraph(t, `{"items":[{"id":"a","prompt":"x"},{"id":"d","prompt":"w"},{"id":"e","prompt":"v"}]}`))
	if res.Answered != 2 {
		t.Fatalf("answered %d without fail_fast", res.Answered)
	}
}

func TestUpstreamBudgetIsFairToEachDependency(t *testing.T) {
	if got := fairShares([]int{10, 100000, 20}, 1000); got[0] != 10 || got[1] != 970 || got[2] != 20 {
		t.Fatalf("shares %v", got)
	}
	if got := fairShares([]int{900, 900, 10}, 1000); got[0]+got[1]+got[2] > 1000 || got[2] != 10 || got[0] < 490 {
		t.Fatalf("shares %v", got)
	}
	huge := strings.Repeat("h", 200000)
	k := newKids(map[string][]agenttest.Turn{"small": {say("small answer")}, "huge": {say(huge)}})
	h, _ := newHost(t, k, HostConfig{UpstreamBudget: 4096})
	_, err := h.RunFleet(t.Context(), mustGraph(t, `{"items":[
		{"id":"small","prompt":"x","write_paths":["s"]},{"id":"huge","prompt":"y","write_paths":["h"]},
		{"id":"join","prompt":"z","depends_on":["huge","small"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	msg := k.firstMessage("join")
	start, end := strings.Index(msg, "<upstream-results>"), strings.Index(msg, "</upstream-results>")
	block := msg[start:end]
	if !strings.Contains(block, "small answer") || strings.Index(block, `id="huge"`) > strings.Index(block, `id="small"`) {
		t.Fatalf("block lost the small answer or the order: %q", block[:min(len(block), 300)])
	}
	if len(block) > 4096+200 || strings.Count(block, "h") < 3000 {
		t.Fatalf("block is %d bytes with %d h", len(block), strings.Count(block, "h"))
	}
}

func TestOverlappingWriteClaimsSerialize(t *testing.T) {
	k := newKids(nil)
	h, ev := newHost(t, k, HostConfig{})
	res, err := h.RunFleet(t.Context(), mustGraph(t, `{"items":[
		{"id":"a","prompt":"x","write_paths":["src"]},{"id":"b","prompt":"y","write_paths":["src/x"]},
		{"id":"c","prompt":"z","write_paths":["docs"]},{"id":"d","prompt":"w"}]}`))
	if err != nil || res.Answered != 4 {
		t.Fatal(err, res)
	}
	sawAC := false
	for _, e := range ev.of(EventFleetUpdated) {
		n := e.Data.(FleetSnapshot).Nodes
		running := func(i int) bool { return n[i].State == NodeRunning }
		if running(0) && running(1) {
			t.Fatal("a and b (src, src/x) ran together")
		}
		if running(3) && (running(0) || running(1) || running(2)) {
			t.Fatal("d (whole workspace) ran beside another writer")
		}
		sawAC = sawAC || running(0) && running(2)
	}
	if !sawAC {
		t.Fatal("disjoint claims a and c never ran together")
	}
}

// workspace is a temp dir with a claimable dir "a", a sibling "b", and a
// symlink a/link -> ../b that would launder writes out of "a".
func workspace(t *testing.T) (string, *policy.Confinement) {
	root := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "a", "link")); err != nil {
		t.Fatal(err)
	}
	conf, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: root, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	return root, conf
}

func builtinTools(t *testing.T, root string, guard agent.PathGuard, names ...string) *agent.ToolRegistry {
	reg := agent.NewToolRegistry()
	if err := reg.AddBuiltins(agent.ToolEnv{Workdir: root, Paths: guard}, names); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestWritesOutsideTheClaimAreRefusedAndCounted(t *testing.T) {
	root, conf := workspace(t)
	write := func(id, p string) agent.ToolCall {
		return call(id, "write_file", map[string]any{"path": p, "content": "x"})
	}
	k := newKids(map[string][]agenttest.Turn{
		"w": {
			calls(write("1", "b/out.txt"), write("2", "a/link/laundered.txt"), write("3", "a/ok.txt")),
			say("wrote what I could"),
		},
		"whole": {calls(write("1", "../escaped.txt"), write("2", "b/fine.txt")), say("done")},
	})
	k.tools = func(ChildSpec) *agent.ToolRegistry {
		reg := builtinTools(t, root, conf, "write_file", "read_file")
		_ = reg.Add(&fakeTool{name: "bash"})
		_ = reg.Add(&fakeTool{name: "custom_writer"})
		return reg
	}
	k.gate = agent.GateFunc(func(context.Context, agent.Call) (agent.Verdict, error) { return agent.Allow, nil })
	h, _ := newHost(t, k, HostConfig{Workdir: root, Paths: conf})
	res, err := h.RunFleet(t.Context(), mustGraph(t, `{"items":[{"id":"w","prompt":"write","write_paths":["a"]},{"id":"r","prompt":"read","write_paths":["b/r"]},{"id":"whole","prompt":"anything"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := h.Counters(); c.WriteScopeViolations != 3 {
		t.Fatalf("violations %d, want 3", c.WriteScopeViolations)
	}
	if _, err := os.Stat(filepath.Join(root, "b", "fine.txt")); err != nil {
		t.Errorf("a whole-workspace writer could not write inside the workspace: %v", err)
	}
	if names := toolNames(k.providers["whole"].Requests()[0]); !names["bash"] || !names["custom_writer"] {
		t.Errorf("a whole-workspace writer lost tools: %v", names)
	}
	for _, p := range []string{"b/out.txt", "b/laundered.txt"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "a", "ok.txt")); err != nil {
		t.Errorf("the write inside the claim failed: %v", err)
	}
	names := toolNames(k.providers["w"].Requests()[0])
	if names["bash"] || names["custom_writer"] || !names["write_file"] || !names["read_file"] || !names["complete_subtask"] {
		t.Fatalf("bound registry: %v", names)
	}
	rec, _ := h.lookup(states(res)["w"].Ref)
	if len(rec.Receipts.Violations) != 2 || len(rec.Receipts.Written) != 1 || rec.Receipts.Written[0] != "a/ok.txt" {
		t.Fatalf("receipts %+v", rec.Receipts)
	}
	if !strings.Contains(rec.Answer, "refused write outside the claim: a/link/laundered.txt") {
		t.Fatalf("answer lacks the violation: %q", rec.Answer)
	}
}

func TestShellBoundKeepsTheFactorysBash(t *testing.T) {
	k := newKids(nil)
	k.tools = func(ChildSpec) *agent.ToolRegistry { return tools(t, &fakeTool{name: "bash"}) }
	h, _ := newHost(t, k, HostConfig{ShellBound: true})
	if _, err := h.RunFleet(t.Context(), mustGraph(t, `{"items":[{"id":"a","prompt":"x","write_paths":["src"]},{"id":"b","prompt":"y","write_paths":["doc"]}]}`)); err != nil {
		t.Fatal(err)
	}
	if !toolNames(k.providers["a"].Requests()[0])["bash"] {
		t.Fatal("a claimed writer lost the bash its factory bound")
	}
}

func TestFalseCompletionIsLoweredAndCounted(t *testing.T) {
	bash := &fakeTool{name: "bash", run: func(context.Context, json.RawMessage) (string, error) { return "ok\nexit code: 0", nil }}
	claim := map[string]any{"status": "complete", "summary": "fixed and tested", "acceptance_criteria": []map[string]any{
		{"criterion": "tests pass", "status": "satisfied", "kind": "verification", "commands": []string{"go test ./..."}},
		{"criterion": "vet is clean", "status": "satisfied", "kind": "verification", "commands": []string{"go  vet ./..."}},
		{"criterion": "looks right", "status": "satisfied", "kind": "manual", "note": "trust me"},
	}}
	honest := map[string]any{"status": "partial", "summary": "half", "acceptance_criteria": []map[string]any{
		{"criterion": "vet is clean", "status": "satisfied", "kind": "verification", "commands": []string{"go vet ./..."}}}}
	k := newKids(map[string][]agenttest.Turn{
		"liar":   {calls(call("1", "bash", map[string]any{"command": "go vet ./..."})), calls(call("2", "complete_subtask", claim)), say("all good")},
		"honest": {calls(call("1", "bash", map[string]any{"command": "go vet ./..."})), calls(call("2", "complete_subtask", honest)), say("half done")},
	})
	k.tools = func(ChildSpec) *agent.ToolRegistry { return tools(t, bash) }
	k.gate = agent.GateFunc(func(context.Context, agent.Call) (agent.Verdict, error) { return agent.Allow, nil })
	h, _ := newHost(t, k, HostConfig{MaxParallelWriters: 1})
	res, err := h.RunFleet(t.Context(), mustGraph(t, `{"items":[{"id":"liar","prompt":"fix"},{"id":"honest","prompt":"fix"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := h.Counters()
	if c.CompletionReports != 2 || c.FalseCompletions != 1 || c.CriterionDowngrades != 2 || c.SubagentToolCalls != 4 {
		t.Fatalf("counters %+v", c)
	}
	liar, _ := h.lookup(states(res)["liar"].Ref)
	r := liar.Report
	if r.Status != "partial" || r.Claimed != "complete" || r.Criteria[0].Status != CriterionUnverified || r.Criteria[1].Status != CriterionSatisfied || r.Criteria[2].Status != CriterionUnverified {
		t.Fatalf("report %+v", r)
	}
	if !strings.HasPrefix(liar.Answer, "status: partial (claimed complete; lowered by the host)") || !strings.Contains(liar.Answer, `no run of "go test ./..."`) ||
		!strings.Contains(liar.Answer, "all good") || !strings.Contains(liar.Answer, "ran: go vet ./... (exit 0)") {
		t.Fatalf("answer %q", liar.Answer)
	}
	honestRec, _ := h.lookup(states(res)["honest"].Ref)
	if honestRec.Report.Status != "partial" || honestRec.Report.Claimed != "" {
		t.Fatalf("an honest partial was changed: %+v", honestRec.Report)
	}
	if !strings.Contains(k.firstMessage("liar"), "complete_subtask") {
		t.Fatal("the writer's task turn lacks the completion contract")
	}
}

func TestAdoptRefReusesAFinishedAnswerAndReadersPageIt(t *testing.T) {
	long := strings.Repeat("é", 30000) // 60000 bytes of two-byte runes
	k := newKids(map[string][]agenttest.Turn{"research": {say(long)}})
	h, _ := newHost(t, k, HostConfig{})
	res, err := h.RunFleet(t.Context(), mustGraph(t, `{"items":[{"id":"research","prompt":"x","write_paths":["n"]},{"id":"other","prompt":"y","write_paths":["m"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ref := states(res)["research"].Ref
	k2 := newKids(nil)
	h2, _ := newHost(t, k2, HostConfig{})
	if err := h2.Restore(h.Records()); err != nil {
		t.Fatal(err)
	}
	res, err = h2.RunFleet(t.Context(), mustGraph(t, `{"items":[{"id":"research","adopt_ref":"`+ref+`"},{"id":"impl","prompt":"build","depends_on":["research"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := k2.started(); len(got) != 1 || got[0] != "impl" || res.Answered != 2 {
		t.Fatalf("started %v answered %d", got, res.Answered)
	}
	if !strings.Contains(k2.firstMessage("impl"), "éé") {
		t.Fatal("the adopted answer did not reach the dependent")
	}
	if _, err := h2.RunFleet(t.Context(), mustGraph(t, `{"items":[{"id":"x","adopt_ref":"sa-nope"},{"id":"y","prompt":"p"}]}`)); !errors.Is(err, ErrPreflight) {
		t.Fatalf("unknown adopt_ref: %v", err)
	}

	read := readResultTool{h: h2}
	var got strings.Builder
	for off := 0; ; {
		out, err := read.Execute(t.Context(), json.RawMessage(`{"ref":"`+ref+`","offset":`+itoa(off)+`,"limit":1001}`))
		if err != nil {
			t.Fatal(err)
		}
		head, page, _ := strings.Cut(out, "\n\n")
		got.WriteString(page)
		var next int
		for f := range strings.FieldsSeq(head) {
			if v, ok := strings.CutPrefix(f, "next_offset="); ok {
				next = atoi(t, v)
			}
		}
		if strings.Contains(head, "complete=true") {
			break
		}
		off = next
	}
	if got.String() != long {
		t.Fatalf("paged %d bytes, want %d", got.Len(), len(long))
	}
	if _, err := read.Execute(t.Context(), json.RawMessage(`{"ref":"`+ref+`","offset":1}`)); err == nil {
		t.Fatal("an offset inside a rune was accepted")
	}
	list, _ := listSubagentsTool{h: h2}.Execute(t.Context(), nil)
	if !strings.HasPrefix(list, states(res)["impl"].Ref) || !strings.Contains(list, ref) {
		t.Fatalf("list (newest first): %q", list)
	}
}

func TestTaskToolRunsOneChild(t *testing.T) {
	k := newKids(map[string][]agenttest.Turn{"task": {say("the answer")}})
	h, _ := newHost(t, k, HostConfig{ReadOnlyProfile: func(p string) bool { return p == "explore" }})
	out, err := taskTool{h: h}.Execute(t.Context(), json.RawMessage(`{"prompt":"look around","profile":"explore"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ": done") || !strings.Contains(out, "the answer") {
		t.Fatalf("task result %q", out)
	}
	if k.specs[0].Writer || strings.Contains(k.firstMessage("task"), "complete_subtask") {
		t.Fatal("a read-only profile was treated as a writer")
	}
}

func TestControllerWithHostReportsCounters(t *testing.T) {
	k := newKids(nil)
	h, _ := newHost(t, k, HostConfig{})
	p := agenttest.NewScriptedProvider(
		calls(call("t", "task", map[string]any{"prompt": "do a part"})),
		calls(complete("c", 1)), say("done"))
	cfg := base(t, p)
	cfg.Gate = agent.GateFunc(func(context.Context, agent.Call) (agent.Verdict, error) { return agent.Allow, nil })
	c := newController(t, Config{Agent: cfg, Host: h})
	res, err := c.Run(t.Context(), Goal{ID: "g1", Objective: "delegate"})
	if err != nil || res.Outcome != StatusComplete {
		t.Fatal(err, res.Outcome)
	}
	if res.Counters.SubagentRuns != 1 {
		t.Fatalf("counters %+v", res.Counters)
	}
}
