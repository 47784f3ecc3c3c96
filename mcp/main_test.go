package mcp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
)

// pluginBin is the example plugin, built once from source by TestMain.
var pluginBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBin = filepath.Join(dir, "reasonix-plugin-example")
	// A fuzz worker process runs TestMain too but only ever calls the fuzz
	// function; building (and linking) the plugin there would cost seconds
	// per worker and target.
	if !slices.Contains(os.Args[1:], "-test.fuzzworker") {
		build := exec.Command("go", "build", "-o", pluginBin, "reasonix/cmd/reasonix-plugin-example")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the e2e tests and make run build
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the example plugin:", err)
			os.Exit(1)
		}
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		code = m.Run()
		if code == 0 {
			if err := goleak.Find(); err != nil {
				fmt.Fprintln(os.Stderr, "goleak:", err)
				code = 1
			}
		}
	}()
	os.Exit(code)
}

// logBuffer is a concurrency-safe sink for a test's slog output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// exampleServer is a stdio config for the example plugin.
func exampleServer(name string, testTools bool) ServerConfig {
	sc := ServerConfig{Name: name, Command: pluginBin}
	if testTools {
		sc.Args = []string{"-test-tools"}
	}
	return sc
}

// startManager starts a Manager for servers, waits for readiness and stops
// it when the test ends.
func startManager(t testing.TB, cfg Config) (*Manager, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 500 * time.Millisecond
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return m, logs
}

// toolByName finds an adapted tool.
func toolByName(t testing.TB, m *Manager, name string) *Tool {
	t.Helper()
	var names []string
	for _, tl := range m.Tools(nil) {
		if tl.Name() == name {
			return tl
		}
		names = append(names, tl.Name())
	}
	t.Fatalf("tool %q not offered; have %s", name, strings.Join(names, ", "))
	return nil
}

// processGone reports whether pid no longer runs. A zombie counts as gone:
// it is dead and only waits for its parent (init, for an orphan) to reap it.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

type agentEvent = agent.Event

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
