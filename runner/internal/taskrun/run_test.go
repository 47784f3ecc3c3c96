package taskrun

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/runner/session"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// recorded is a Host's EmitLogged that keeps the events' types, for a run
// without an event queue (every event is written directly).
type recorded struct {
	mu    sync.Mutex
	types []string
}

func (r *recorded) emit(_ context.Context, _, typ string, _ any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.types = append(r.types, typ)
}

func (r *recorded) count(typ string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.types {
		if t == typ {
			n++
		}
	}
	return n
}

func counters() Metrics {
	vec := func(label string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "test_" + label}, []string{label})
	}
	return Metrics{ToolCalls: vec("tool"), Tokens: vec("kind"), Cost: vec("model"), Unpriced: vec("model")}
}

// A run counts its tokens against [runner] max_tokens on its own, with no
// service around it: the budget_warning comes once, when budget_warn of
// the budget is crossed, and the run stops with ErrTokenBudget when the
// budget is spent.
func TestRunWarnsOnceThenStopsAtTheTokenBudget(t *testing.T) {
	set := &config.Config{}
	set.Runner.MaxTokens, set.Runner.BudgetWarn = 100, 0.5
	var rec recorded
	h := &Host{Log: slog.New(slog.DiscardHandler), Settings: set, Prices: session.NewPrices(set), Metrics: counters(), Now: time.Now,
		EmitLogged: rec.emit}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	r := New(h, store.Task{ID: "t1", Attempt: 1}, cancel, nil)
	observe := r.Observer(ctx)
	use := func(tokens int) {
		observe(agent.Event{Type: agent.EventUsage, Model: "fake/m", Usage: &agent.Usage{Prompt: tokens}})
	}

	use(30)
	if n := rec.count("budget_warning"); n != 0 || ctx.Err() != nil {
		t.Fatalf("after 30 of 100 tokens: %d warnings, ctx %v", n, context.Cause(ctx))
	}
	use(30) // 60: past half
	use(20) // 80: past half again, no second warning
	if n := rec.count("budget_warning"); n != 1 || ctx.Err() != nil {
		t.Fatalf("after 80 of 100 tokens: %d warnings, want 1; ctx %v", n, context.Cause(ctx))
	}
	use(30) // 110: spent
	if !errors.Is(context.Cause(ctx), ErrTokenBudget) {
		t.Fatalf("cause %v, want ErrTokenBudget", context.Cause(ctx))
	}
	if n := rec.count("usage"); n != 4 {
		t.Fatalf("%d usage events, want 4", n)
	}
	if got := r.SpendSoFar(ctx).Tokens.Prompt; got != 110 {
		t.Fatalf("spend so far %d prompt tokens, want 110", got)
	}
}

// The control loop reads a cancel requested through the store (on another
// node, say) when poked, and stops the run with ErrCancelled.
func TestControlStopsTheRunOnAStoredCancel(t *testing.T) {
	st := storetest.SQLite(t, store.Config{})
	task, _, err := st.CreateTask(context.Background(), store.NewTask{Source: store.SourceAPI, Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	h := &Host{Store: st, Log: slog.New(slog.DiscardHandler), Now: time.Now,
		ControlInterval: time.Hour, HeartbeatInterval: time.Hour} // only the poke can wake it
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	r := New(h, task, cancel, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Control(ctx)
	}()
	if err := st.RequestCancel(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
	r.Poke()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the control loop did not stop on the cancel request")
	}
	if !errors.Is(context.Cause(ctx), ErrCancelled) {
		t.Fatalf("cause %v, want ErrCancelled", context.Cause(ctx))
	}
}
