//go:build !windows

package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"reasonix/agent"
)

// liveRecorder is a live output that keeps what it was given.
type liveRecorder struct {
	mu      sync.Mutex
	out     strings.Builder
	code    int
	done    int
	command string
	kill    func()
	started chan struct{} // closed at the first write
}

func (r *liveRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.out.Len() == 0 {
		close(r.started)
	}
	r.out.Write(p)
	return 0, context.Canceled // a failing live output must not cut the result
}

func (r *liveRecorder) Done(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.code = code
	r.done++
}

func liveContext(r *liveRecorder) context.Context {
	return agent.ContextWithLiveOutput(context.Background(), func(_ context.Context, command string, kill func()) agent.LiveOutput {
		r.command, r.kill = command, kill
		return r
	})
}

func runBash(t *testing.T, ctx context.Context, b agent.Tool, command string) string {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"command": command})
	out, err := b.Execute(ctx, raw)
	if err != nil {
		t.Fatalf("bash %q: %v", command, err)
	}
	return out
}

// TestBashLiveOutputGetsTheCommandsOutput: the live output gets stdout
// and stderr as produced and the exit status, and the result is the one
// the model gets without it.
func TestBashLiveOutputGetsTheCommandsOutput(t *testing.T) {
	env, _ := testEnv(t)
	b := tool(t, env, "bash")
	const command = "echo out; echo err >&2; printf tail; exit 3"
	plain := runBash(t, context.Background(), b, command)
	r := &liveRecorder{started: make(chan struct{})}
	got := runBash(t, liveContext(r), b, command)
	if got != plain || got != "out\nerr\ntail\nexit code: 3" {
		t.Errorf("result with a live output %q, without %q", got, plain)
	}
	if r.out.String() != "out\nerr\ntail" || r.code != 3 || r.done != 1 || r.command != command {
		t.Errorf("live output %q, code %d, done %d times, command %q", r.out.String(), r.code, r.done, r.command)
	}

	r = &liveRecorder{started: make(chan struct{})}
	runBash(t, liveContext(r), b, "kill -TERM $$")
	if r.code != 128+15 {
		t.Errorf("a command killed by SIGTERM: live exit status %d, want 143", r.code)
	}
}

// TestBashLiveOutputKillStopsTheCommand: kill from the live output stops
// the command and its children, and the result says so.
func TestBashLiveOutputKillStopsTheCommand(t *testing.T) {
	env, _ := testEnv(t)
	b := tool(t, env, "bash")
	r := &liveRecorder{started: make(chan struct{})}
	go func() {
		<-r.started
		r.kill()
	}()
	got := runBash(t, liveContext(r), b, "echo ready; sleep 300")
	if !strings.Contains(got, "ready\n") || !strings.Contains(got, "stopped by the user") {
		t.Errorf("result %q", got)
	}
	if r.done != 1 || r.code == 0 {
		t.Errorf("done %d times with %d, want once with a failure", r.done, r.code)
	}
}
