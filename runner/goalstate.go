package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"reasonix/goals"
)

// goalDoc is what a goal task keeps in the store's goal state: the goal
// controller's State, the finished sub-agents (so read_subagent_result and
// adopt_ref work across runs and restarts) and the delegation counters, which
// add up over all the task's runs.
type goalDoc struct {
	State    json.RawMessage     `json:"state,omitempty"`
	Children []goals.ChildRecord `json:"children,omitempty"`
	Counters goals.Counters      `json:"counters"`
}

// goalStore is the goals.StateStore of one run of a goal task.
type goalStore struct {
	s      *Service
	taskID string
	base   goals.Counters // the earlier runs'
	host   *goals.Host    // set before the controller runs

	mu    sync.Mutex
	state json.RawMessage // the last state saved
	saved int             // children in the last saved document
}

var _ goals.StateStore = (*goalStore)(nil)

// SaveGoal persists the state with the children finished so far.
func (g *goalStore) SaveGoal(ctx context.Context, st *goals.State) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("runner: encode goal state: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.state = raw
	return g.saveLocked(ctx)
}

// childrenChanged saves children that finished since the last save, so a
// crash in the middle of a long turn keeps them. A failure is logged: the
// controller's next save tries again.
func (g *goalStore) childrenChanged(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == nil || len(g.host.Records()) == g.saved {
		return
	}
	if err := g.saveLocked(context.WithoutCancel(ctx)); err != nil {
		g.s.log.Warn("runner: saving sub-agent records", "task", g.taskID, "err", err)
	}
}

func (g *goalStore) saveLocked(ctx context.Context) error {
	recs := g.host.Records()
	raw, err := json.Marshal(goalDoc{State: g.state, Children: recs, Counters: g.counters()})
	if err != nil {
		return fmt.Errorf("runner: encode goal state: %w", err)
	}
	if err := g.s.st.SaveGoalState(ctx, g.taskID, raw); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	g.saved = len(recs)
	return nil
}

// counters are the task's delegation counters: earlier runs' plus this one's.
func (g *goalStore) counters() goals.Counters {
	if g.host == nil {
		return g.base
	}
	return g.base.Add(g.host.Counters())
}
