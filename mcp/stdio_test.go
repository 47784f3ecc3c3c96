package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/internal/eventually"
)

func TestStdioToolsAndCalls(t *testing.T) {
	m, logs := startManager(t, Config{Servers: []ServerConfig{exampleServer("example plugin", false)}})

	st := m.Status()
	if len(st) != 1 || st[0].State != StateReady || st[0].Tools != 2 || st[0].PID == 0 || st[0].Serial {
		t.Fatalf("status = %+v, want one ready parallel server with 2 tools and a pid", st)
	}

	reg := agent.NewToolRegistry()
	n, err := m.AddTools(reg, nil)
	if err != nil || n != 2 {
		t.Fatalf("AddTools = %d, %v; want 2, nil", n, err)
	}
	want := []string{"mcp__example_plugin__echo", "mcp__example_plugin__wordcount"}
	if got := reg.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("registry names = %v, want %v", got, want)
	}
	for _, s := range reg.Schemas() {
		if !strings.Contains(string(s.Parameters), `"text"`) {
			t.Errorf("%s schema lost its properties: %s", s.Name, s.Parameters)
		}
	}

	echo, _ := reg.Get("mcp__example_plugin__echo")
	if echo.(*Tool).Destructive() {
		t.Errorf("echo: a read-only tool reports destructive")
	}
	out, err := echo.Execute(context.Background(), json.RawMessage(`{"text":"héllo wörld"}`))
	if err != nil || out != "héllo wörld" {
		t.Fatalf("echo = %q, %v", out, err)
	}
	wc, _ := reg.Get("mcp__example_plugin__wordcount")
	out, err = wc.Execute(context.Background(), json.RawMessage(`{"text":"one two\nthree"}`))
	if err != nil || out != "words=3 lines=2 chars=13" {
		t.Fatalf("wordcount = %q, %v", out, err)
	}

	// The plugin logs on stderr at start; that line must reach our log.
	if !strings.Contains(logs.String(), "serving MCP over stdio") {
		t.Errorf("stderr not logged; log:\n%s", logs.String())
	}
}

func TestTestToolsHiddenByDefault(t *testing.T) {
	m, _ := startManager(t, Config{Servers: []ServerConfig{exampleServer("ex", true)}})
	if st := m.Status()[0]; st.Tools != 6 {
		t.Fatalf("with -test-tools the plugin lists %d tools, want 6", st.Tools)
	}
}

func TestIsErrorResultBecomesError(t *testing.T) {
	m, _ := startManager(t, Config{Servers: []ServerConfig{exampleServer("ex", true)}})
	fail := toolByName(t, m, "mcp__ex__fail")
	if fail.ReadOnly() || fail.Destructive() {
		t.Errorf("fail: readOnly=%v destructive=%v, want false/false (destructiveHint false)", fail.ReadOnly(), fail.Destructive())
	}
	crash := toolByName(t, m, "mcp__ex__crash")
	if crash.ReadOnly() || !crash.Destructive() {
		t.Errorf("crash has no hints: readOnly=%v destructive=%v, want false/true", crash.ReadOnly(), crash.Destructive())
	}
	out, err := fail.Execute(context.Background(), nil)
	var te *ToolError
	if !errors.As(err, &te) || te.Text != "it failed on purpose" || out != "" {
		t.Fatalf("fail = %q, %v; want a ToolError with the server's text", out, err)
	}
}

func TestCallTimeout(t *testing.T) {
	sc := exampleServer("ex", true)
	sc.ToolTimeouts = map[string]time.Duration{"slow": 150 * time.Millisecond}
	m, _ := startManager(t, Config{Servers: []ServerConfig{sc}})
	slow := toolByName(t, m, "mcp__ex__slow")

	start := time.Now()
	_, err := slow.Execute(context.Background(), json.RawMessage(`{"millis":10000}`))
	if err == nil || !strings.Contains(err.Error(), "timed out after 150ms") {
		t.Fatalf("slow = %v, want a timeout after 150ms", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("timeout took %s", d)
	}
	// A call that fits its timeout still works on the same connection.
	out, err := slow.Execute(context.Background(), json.RawMessage(`{"millis":1}`))
	if err != nil || !strings.HasPrefix(out, "slept 1ms") {
		t.Fatalf("slow(1ms) = %q, %v", out, err)
	}
}

func TestCrashIsReportedAndRestartedOnNextUse(t *testing.T) {
	m, logs := startManager(t, Config{Servers: []ServerConfig{exampleServer("ex", true)}})
	pid := m.Status()[0].PID

	_, err := toolByName(t, m, "mcp__ex__crash").Execute(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "stopped during crash") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("crash = %v; want an error saying the server stopped with exit status 3", err)
	}
	waitFor(t, func() bool { return m.Status()[0].State == StateFailed })
	if !processGone(pid) {
		t.Errorf("crashed process %d still exists", pid)
	}
	if !strings.Contains(logs.String(), "crash tool called") {
		t.Errorf("the crashing server's stderr was not logged")
	}

	out, err := toolByName(t, m, "mcp__ex__echo").Execute(context.Background(), json.RawMessage(`{"text":"again"}`))
	if err != nil || out != "again" {
		t.Fatalf("echo after crash = %q, %v; want a restarted server", out, err)
	}
	st := m.Status()[0]
	if st.State != StateReady || st.PID == 0 || st.PID == pid {
		t.Fatalf("status after restart = %+v (old pid %d)", st, pid)
	}
}

// waitFor polls cond; it is for states another goroutine settles shortly.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	eventually.True(t, 0, cond, "condition not met")
}

func TestSerialCallsNeverOverlap(t *testing.T) {
	for _, tc := range []struct {
		name, concurrency string
		wantMax           int
	}{
		{"browser", "", 1},              // serial by default: the name looks stateful
		{"ex", Serial, 1},               // serial by configuration
		{"ex", Parallel, 2},             // the control: the test can see an overlap
		{"chromium-tools", Parallel, 2}, // explicit configuration wins over the name
	} {
		t.Run(tc.name+"/"+tc.concurrency, func(t *testing.T) {
			sc := exampleServer(tc.name, true)
			sc.Concurrency = tc.concurrency
			m, _ := startManager(t, Config{Servers: []ServerConfig{sc}})
			slow := toolByName(t, m, "mcp__"+tc.name+"__slow")

			results := make([]string, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Go(func() { results[i], errs[i] = slow.Execute(context.Background(), json.RawMessage(`{"millis":300}`)) })
			}
			wg.Wait()
			peak := 0
			for i := range 2 {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				_, after, _ := strings.Cut(results[i], "concurrent=")
				n, _ := strconv.Atoi(after)
				peak = max(peak, n)
			}
			if peak != tc.wantMax {
				t.Fatalf("peak concurrency on the server = %d, want %d (%v)", peak, tc.wantMax, results)
			}
		})
	}
}

func TestSerialWaitHonoursCancellation(t *testing.T) {
	sc := exampleServer("ex", true)
	sc.Concurrency = Serial
	m, _ := startManager(t, Config{Servers: []ServerConfig{sc}})
	slow := toolByName(t, m, "mcp__ex__slow")

	first := make(chan error, 1)
	go func() {
		// The first call takes the slot; progress is not needed, the
		// status of the semaphore is.
		_, err := slow.Execute(context.Background(), json.RawMessage(`{"millis":1000}`))
		first <- err
	}()
	waitFor(t, func() bool { return len(slow.srv.sem) > 0 })

	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := slow.Execute(ctx, json.RawMessage(`{"millis":1}`))
		second <- err
	}()
	cancel()
	select {
	case err := <-second:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "serial") {
			t.Fatalf("second call = %v, want a cancelled wait for the serial slot", err)
		}
	case <-first:
		t.Fatal("the first call finished before the cancelled second call returned")
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

func TestProgressBecomesEvents(t *testing.T) {
	m, _ := startManager(t, Config{Servers: []ServerConfig{exampleServer("ex", true)}})
	var mu sync.Mutex
	var events []agent.Event
	type key struct{}
	var tool *Tool
	for _, tl := range m.Tools(func(ctx context.Context, ev agent.Event) {
		if ctx.Value(key{}) != "call-7" {
			t.Errorf("progress callback got a ctx that is not the call's")
		}
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}) {
		if tl.RemoteName() == "progress" {
			tool = tl
		}
	}
	ctx := context.WithValue(context.Background(), key{}, "call-7")
	ctx = agent.ContextWithToolCall(ctx, agent.ToolCall{ID: "call-7", Name: "mcp__ex__progress"})
	out, err := tool.Execute(ctx, json.RawMessage(`{"steps":3}`))
	if err != nil || out != "done after 3 steps" {
		t.Fatalf("progress = %q, %v", out, err)
	}
	// Notifications are dispatched apart from the response; allow them to land.
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(events) >= 3 })
	mu.Lock()
	defer mu.Unlock()
	for i, ev := range events {
		want := fmt.Sprintf("%d/3 step %d", i+1, i+1)
		if ev.Type != agent.EventToolProgress || ev.Call == nil || ev.Call.Name != "mcp__ex__progress" || ev.Call.ID != "call-7" || ev.Text != want {
			t.Errorf("event %d = %+v (call %+v), want tool_progress %q", i, ev, ev.Call, want)
		}
	}
}

func TestStopLeavesNoProcess(t *testing.T) {
	m, _ := startManager(t, Config{Servers: []ServerConfig{exampleServer("ex", false)}})
	pid := m.Status()[0].PID
	if pid == 0 || processGone(pid) {
		t.Fatalf("no running process before Stop (pid %d)", pid)
	}
	if err := m.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !processGone(pid) {
		t.Fatalf("process %d survived Stop", pid)
	}
	if st := m.Status()[0]; st.State != StateClosed {
		t.Fatalf("state after Stop = %s", st.State)
	}
	_, err := toolByName(t, m, "mcp__ex__echo").Execute(context.Background(), json.RawMessage(`{"text":"x"}`))
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Stop = %v, want ErrClosed", err)
	}
}

func TestStartupTimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	childPIDFile := filepath.Join(dir, "child.pid")
	// The server never answers and has a child of its own in its group.
	sc := ServerConfig{
		Name:           "mute",
		Command:        "sh",
		Args:           []string{"-c", `sleep 100 & echo $! > "$PIDFILE"; exec sleep 100`},
		Env:            map[string]string{"PIDFILE": childPIDFile},
		StartupTimeout: 300 * time.Millisecond,
	}
	start := time.Now()
	m, _ := startManager(t, Config{Servers: []ServerConfig{sc}})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("startup timeout took %s", d)
	}
	st := m.Status()[0]
	if st.State != StateFailed || st.Err == nil || !strings.Contains(st.Err.Error(), "did not become ready within 300ms") {
		t.Fatalf("status = %+v, want failed: did not become ready within 300ms", st)
	}
	raw, err := os.ReadFile(childPIDFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	// The grandchild is reparented to init, which reaps it asynchronously.
	waitFor(t, func() bool { return processGone(child) })
	if len(m.Tools(nil)) != 0 {
		t.Fatal("a server that never started offers tools")
	}
}

func TestStartReturnsBeforeReady(t *testing.T) {
	m, err := New(Config{Servers: []ServerConfig{{Name: "mute", Command: "sleep", Args: []string{"100"}}}, ShutdownGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop(context.Background())
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := m.Status()[0]; st.State != StateStarting {
		t.Fatalf("state right after Start = %s, want starting", st.State)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := m.WaitReady(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReady = %v, want the caller's deadline", err)
	}
	pid := m.Status()[0].PID
	_ = pid
	if err := m.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := m.Status()[0]; st.State != StateClosed {
		t.Fatalf("state after Stop = %s", st.State)
	}
}

func TestMissingCommandFails(t *testing.T) {
	m, _ := startManager(t, Config{Servers: []ServerConfig{{Name: "gone", Command: filepath.Join(t.TempDir(), "nope")}}})
	st := m.Status()[0]
	if st.State != StateFailed || st.Err == nil || !strings.Contains(st.Err.Error(), `server "gone"`) {
		t.Fatalf("status = %+v", st)
	}
}
