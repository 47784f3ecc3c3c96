package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"reasonix/agent"
	"reasonix/mcp"
	"reasonix/mcp/mcptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNewHTTPServer(t *testing.T) {
	sc := mcptest.NewHTTPServer(t, "fake",
		mcptest.Tool{Name: "look", ReadOnly: true},
		mcptest.Tool{Name: "break", Handle: func(context.Context, map[string]any) (string, error) {
			return "", errors.New("broken on purpose")
		}},
	)
	m, err := mcp.New(mcp.Config{Servers: []mcp.ServerConfig{sc}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop(context.Background())
	_ = m.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	reg := agent.NewToolRegistry()
	if n, err := m.AddTools(reg, nil); n != 2 || err != nil {
		t.Fatalf("AddTools = %d, %v", n, err)
	}
	look, _ := reg.Get("mcp__fake__look")
	out, err := look.Execute(context.Background(), json.RawMessage(`{"q":"x"}`))
	if err != nil || out != `{"q":"x"}` || !agent.IsReadOnly(look) {
		t.Fatalf("look = %q, %v (read-only %v)", out, err, agent.IsReadOnly(look))
	}
	brk, _ := reg.Get("mcp__fake__break")
	var te *mcp.ToolError
	if _, err := brk.Execute(context.Background(), nil); !errors.As(err, &te) || te.Text != "broken on purpose" {
		t.Fatalf("break = %v", err)
	}
}
