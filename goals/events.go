package goals

import (
	"time"

	"reasonix/agent"
)

// Event types this package emits through the configured agent.Observer. The
// payload is in agent.Event.Data, of the type named beside each.
const (
	// EventGoalUpdated: GoalUpdate, after every turn and status change.
	EventGoalUpdated agent.EventType = "goal_updated"
	// EventQuestion: Question, when the goal needs information only the
	// requester has. The answer comes back through Controller.Resume.
	EventQuestion agent.EventType = "question"
	// EventPlanApproval: PlanProposal, when a plan-first goal submits its plan.
	EventPlanApproval agent.EventType = "plan_approval"
	// EventFleetUpdated: FleetSnapshot, on every node state change, with
	// every node of the graph so a chat can render one live graph.
	EventFleetUpdated agent.EventType = "fleet_updated"
	// EventSubagentStarted and EventSubagentFinished: SubagentEvent.
	EventSubagentStarted  agent.EventType = "subagent_started"
	EventSubagentFinished agent.EventType = "subagent_finished"
	// EventRedirect: Redirect, when a stalled goal changes strategy.
	EventRedirect agent.EventType = "goal_redirected"
	// EventBudgetWarning: a BudgetWarning, once per slice and budget, when
	// the slice's spending crosses Budget.Warn of a budget it has not
	// reached.
	EventBudgetWarning agent.EventType = "budget_warning"
)

// BudgetWarning is the payload of EventBudgetWarning, the same fields as
// a run's budget_warning (Scope tells them apart).
type BudgetWarning struct {
	Budget string  `json:"budget"` // cost, tokens or turns
	Limit  float64 `json:"limit"`
	Spent  float64 `json:"spent"`
	Share  float64 `json:"share"`
	Scope  string  `json:"scope"` // "goal_slice"
}

// Redirect is the payload of EventRedirect.
type Redirect struct {
	Goal string `json:"goal_id"`
	// Count is the goal's redirects so far, InRow those since its last
	// progress (Config.MaxRedirects bounds it).
	Count    int    `json:"count"`
	InRow    int    `json:"in_row"`
	Reason   string `json:"reason"`
	Strategy string `json:"strategy"`
}

// GoalUpdate is the payload of EventGoalUpdated.
type GoalUpdate struct {
	GoalID   string `json:"goal_id"`
	Revision int    `json:"revision"`
	Status   Status `json:"status"`
	Turns    int    `json:"turns"`
	Tokens   int    `json:"tokens"`
	// Cost is the goal's cost so far (USD, priced calls) and TurnCost the
	// last turn's, its sub-agents' included.
	Cost     float64 `json:"cost"`
	TurnCost float64 `json:"turn_cost"`
	Reason   string  `json:"reason,omitempty"`
}

// Question is the payload of EventQuestion.
type Question struct {
	GoalID   string `json:"goal_id"`
	Question string `json:"question"`
	Reason   string `json:"reason,omitempty"`
}

// NodeState is a fleet node's lifecycle state.
type NodeState string

// Fleet node states. Done, failed and skipped are final.
const (
	NodePending NodeState = "pending"
	NodeRunning NodeState = "running"
	NodeDone    NodeState = "done"
	NodeFailed  NodeState = "failed"
	NodeSkipped NodeState = "skipped"
)

// NodeStatus is one node of a FleetSnapshot.
type NodeStatus struct {
	ID        string        `json:"id"`
	State     NodeState     `json:"state"`
	DependsOn []string      `json:"depends_on,omitempty"`
	Reason    string        `json:"reason,omitempty"`  // failure class, inherited by skipped nodes
	Summary   string        `json:"summary,omitempty"` // short preview of the answer or why it stopped
	Ref       string        `json:"ref,omitempty"`     // the child's answer, for read_subagent_result
	Duration  time.Duration `json:"duration,omitempty"`
	Tokens    int           `json:"tokens,omitempty"`
	Cost      float64       `json:"cost,omitempty"` // USD of the node's priced calls
}

// FleetSnapshot is the payload of EventFleetUpdated: the whole graph.
// A nested fleet (one a child started) names that child: Parent is its
// ref, ParentFleet and ParentID the fleet and node it runs as, so a view
// can draw the nested graph under that node. Depth is the depth of this
// fleet's nodes (1 for the parent run's own fleet).
type FleetSnapshot struct {
	FleetID     string       `json:"fleet_id"`
	Parent      string       `json:"parent,omitempty"`
	ParentFleet string       `json:"parent_fleet,omitempty"`
	ParentID    string       `json:"parent_id,omitempty"`
	Depth       int          `json:"depth,omitempty"`
	Nodes       []NodeStatus `json:"nodes"`
}

// SubagentEvent is the payload of EventSubagentStarted and EventSubagentFinished.
type SubagentEvent struct {
	FleetID     string    `json:"fleet_id,omitempty"`
	ID          string    `json:"id"`
	Ref         string    `json:"ref"`
	CapsuleHash string    `json:"capsule_hash,omitempty"`
	State       NodeState `json:"state,omitempty"` // finished only
	Reason      string    `json:"reason,omitempty"`
	Tokens      int       `json:"tokens,omitempty"` // finished only
	Cost        float64   `json:"cost,omitempty"`   // finished only: USD of its priced calls
	Parent      string    `json:"parent,omitempty"` // the ref of the child that started it
	Depth       int       `json:"depth,omitempty"`
}
