package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// stack is one running copy of deploy/compose/compose.yaml.
type stack struct {
	t       *testing.T
	dir     string // the project directory: the compose files and env files
	project string
}

func (s *stack) compose(args ...string) string {
	s.t.Helper()
	return run(s.t, s.dir, "docker-compose", append([]string{"-p", s.project}, args...)...)
}

func (s *stack) logs(service string) func() string {
	return func() string {
		cmd := []string{"logs", "--no-color"}
		if service != "" {
			cmd = append(cmd, service)
		}
		return s.compose(cmd...)
	}
}

// startStack copies deploy/compose into a fresh project directory, writes
// the env files the examples describe (with fresh secrets and free ports)
// and starts it.
func startStack(t *testing.T, reasonixImage, postgresImage, modelURL string) (*stack, api, api) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"compose.yaml", "reasonix.toml"} {
		data, err := os.ReadFile(filepath.Join("..", "compose", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pgPort, portA, portB := freePort(t), freePort(t), freePort(t)
	password, token := fmt.Sprintf("pw-%d", time.Now().UnixNano()), fmt.Sprintf("rxt_e2e_%d", time.Now().UnixNano())
	files := map[string]string{
		"postgres.env": "POSTGRES_USER=reasonix\nPOSTGRES_PASSWORD=" + password + "\nPOSTGRES_DB=reasonix\n",
		"reasonix.env": "REASONIX_MODEL_API_KEY=sk-e2e\nREASONIX_API_TOKEN=" + token + "\n" +
			fmt.Sprintf("REASONIX_STORE_DSN=postgres://reasonix:%s@127.0.0.1:%d/reasonix?sslmode=disable\n", password, pgPort) +
			"REASONIX_MODEL_BASE_URL=" + modelURL + "\n",
		// The variables compose.yaml interpolates.
		".env": fmt.Sprintf("REASONIX_IMAGE=%s\nPOSTGRES_IMAGE=%s\nPOSTGRES_PORT=%d\nREASONIX_A_ADDR=127.0.0.1:%d\nREASONIX_B_ADDR=127.0.0.1:%d\n",
			reasonixImage, postgresImage, pgPort, portA, portB),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The nodes run as the image's user and read the mounted config.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, dir: dir, project: fmt.Sprintf("rxe2e%d", os.Getpid())}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stack logs:\n%s", s.logs("")())
		}
		s.compose("down", "-v", "--timeout", "45")
	})
	start := time.Now()
	s.compose("up", "-d")
	a := api{t: t, base: "http://127.0.0.1:" + strconv.Itoa(portA), token: token}
	b := api{t: t, base: "http://127.0.0.1:" + strconv.Itoa(portB), token: token}
	readyA := waitReady(t, a.base, start, s.logs("reasonix-a"))
	readyB := waitReady(t, b.base, start, s.logs("reasonix-b"))
	t.Logf("compose up to both nodes ready: %v (node A %v, node B %v)", max(readyA, readyB), readyA, readyB)
	return s, a, b
}

// promptOf is the task's prompt: the first user message.
func promptOf(req agenttest.Request) string {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			return m.Content
		}
	}
	return ""
}

// lastToolResult is the content of the request's last message when it is a
// tool result, else "".
func lastToolResult(req agenttest.Request) string {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == agent.RoleTool {
		return req.Messages[n-1].Content
	}
	return ""
}

// Postgres and two nodes from compose.yaml: tasks handed to either node
// run exactly once, their bash steps run in the container, a node stops
// cleanly on SIGTERM and the other carries on.
func TestComposeStackRunsTasksOnTwoNodes(t *testing.T) {
	reasonixImage, postgresImage := images(t)
	if postgresImage == "" {
		t.Fatal("REASONIX_DEPLOY_POSTGRES_IMAGE is not set")
	}
	var mu sync.Mutex
	firstCalls := map[string]int{}
	script := func(req agenttest.Request) agenttest.Turn {
		if res := lastToolResult(req); res != "" {
			return agenttest.Turn{Text: "done: " + strings.TrimSpace(res)}
		}
		prompt := promptOf(req)
		mu.Lock()
		firstCalls[prompt]++
		mu.Unlock()
		return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash",
			Arguments: `{"command":"id -un > out.txt && cat out.txt"}`}}}
	}
	const tasks = 6
	turns := make([]agenttest.Turn, 4*(tasks+1))
	for i := range turns {
		turns[i] = agenttest.Respond(script)
	}
	model := agenttest.NewServer(t, turns...)

	s, a, b := startStack(t, reasonixImage, postgresImage, model.URL)
	// The bash sandbox works inside the container as the image ships.
	if startup := s.logs("reasonix-a")(); !strings.Contains(startup, `"msg":"bash is sandboxed"`) {
		t.Errorf("node A runs bash without an OS sandbox:\n%s", startup)
	} else {
		t.Logf("node A's start-up log:\n%s", startup)
	}

	var ids []string
	for i := range tasks {
		node := a
		if i%2 == 1 {
			node = b
		}
		ids = append(ids, node.submit(fmt.Sprintf("deploy task %d", i)))
	}
	for i, id := range ids {
		got := a.finish(id, s.logs(""))
		if got.State != "succeeded" || got.Result == nil || !strings.HasPrefix(got.Result.FinalAnswer, "done: reasonix\n") {
			t.Errorf("task %d = %+v %+v", i, got, got.Result)
		}
	}
	mu.Lock()
	for i := range tasks {
		if n := firstCalls[fmt.Sprintf("deploy task %d", i)]; n != 1 {
			t.Errorf("deploy task %d started %d times", i, n)
		}
	}
	mu.Unlock()

	// SIGTERM to node A (docker-compose stop): it stops cleanly, node B
	// keeps serving the shared store.
	stop := time.Now()
	s.compose("stop", "--timeout", "45", "reasonix-a")
	t.Logf("docker-compose stop reasonix-a: %v", time.Since(stop))
	container := s.compose("ps", "-q", "reasonix-a")
	if code := run(t, "", "docker", "inspect", "-f", "{{.State.ExitCode}}", container); code != "0" {
		t.Errorf("node A exited %s after SIGTERM\n%s", code, s.logs("reasonix-a")())
	}
	checkJSONLogs(t, stripComposePrefix(s.logs("reasonix-a")()))
	id := b.submit("deploy task after A stopped")
	if got := b.finish(id, s.logs("reasonix-b")); got.State != "succeeded" {
		t.Errorf("task on node B after A stopped = %+v", got)
	}
	// Node B sees the tasks node A took in.
	if got := b.finish(ids[0], s.logs("")); got.State != "succeeded" {
		t.Errorf("node B reads node A's task as %+v", got)
	}
}

// stripComposePrefix removes the "service_1  | " docker-compose puts
// before each log line.
func stripComposePrefix(logs string) string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if _, rest, ok := strings.Cut(line, "| "); ok {
			line = rest
		}
		if strings.HasPrefix(line, "Attaching to") {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
