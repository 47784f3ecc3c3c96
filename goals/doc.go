// Package goals runs unattended work as goals and splits work into small
// dependency graphs of sub-agents.
//
// A Controller drives one goal: it puts the goal block (the task contract)
// on user turns, never in the system prompt, and keeps issuing continuation
// turns through an agent.Agent until the model completes or blocks the goal
// through update_goal, the context ends, a budget is spent, or the goal
// stalls. The goal's State is serializable; the controller saves it through
// a consumer-owned StateStore after every turn, and Resume continues from a
// saved State after a restart or an answer from the requester.
//
// A Host runs sub-agents for one parent run: the task and fleet tools, the
// readers read_subagent_result and list_subagents, and the complete_subtask
// contract of writer children. Children inherit nothing implicitly: a
// consumer-owned ChildFactory builds each child's agent.Config, and the host
// binds its registry to the child's write claim, records what the child ran
// and wrote, and adjudicates its completion claim against those receipts.
// A child below HostConfig.MaxDepth gets task, fleet and the readers of its
// own, bound to its lineage (nested.go): its children claim inside its
// claim and are adjudicated the same way, one level down.
//
// Events this package defines (agent.Event.Type, payload in Data) are listed
// in events.go.
package goals
