// Package runner is the durable task service behind `reasonix serve`: it
// takes tasks in (Submit), runs them on a bounded set of workers fed by the
// store's River queue, persists every step so a run can be rebuilt and
// continued, parks runs that wait for a person without holding a worker
// (the approvals broker), and recovers after a crash.
//
// The flow of one task: Submit commits the task and its job in one
// transaction; a worker claims it with a state compare-and-swap, prepares
// its workspace, assembles a session (provider, built-in and MCP tools behind
// a write-ahead journal, a policy gate whose approver is the broker), rebuilds
// the conversation from the store and runs or continues it. A goal task
// (Goal or PlanFirst) runs through the goals package's controller instead:
// its state, its finished sub-agents and its delegation counters are saved
// with the task after every turn, a plan-first plan is an approval of tool
// "plan" in the same broker, and a later run (after an approval, an answer
// to the goal's question, a restart) resumes the saved goal. Every message is
// persisted as it is appended and every other step becomes an event in the
// task's log, which Subscribe streams to the HTTP API and the chat relays.
//
// # Layout
//
// This package keeps the public API — Service with Submit, Decide,
// Message and the queries, the errors, Config — and what still needs the
// service itself. The parts of the lifecycle that need only what they are
// handed live in internal packages, each given small store interfaces, a
// clock and callbacks rather than the Service, and never importing this
// package (internal/layering holds them to it):
//
//   - internal/taskrun: one task's execution on this node (Run): its
//     control loop (cancel, steering, heartbeat), the observer that
//     persists each step, one store write per step, the tools behind the
//     write-ahead journal, a sub-agent's journal and steps, the budgets
//     it counts and its spend.
//   - internal/execute: the pieces a run is built of that need neither
//     the run nor the session (the run's event queue, the journal's keys
//     and the settling of calls a crash left unanswered).
//   - internal/maintenance: the upkeep loops (approval expiry, chat event
//     pruning, the take-over sweep of dead nodes' tasks, publish retries)
//     and the schedules' firing (ScheduleFirer, woken by ScheduleTicker).
//   - internal/cluster: this node among others sharing the store — its
//     heartbeat, the node list, the hand-over of running tasks (a drain's
//     requeue, a dead node's take-over, crash recovery), the scratch
//     directories that travel with their tasks, the note on changes a
//     continuation lost, and the hub that wakes event subscribers.
//   - internal/publish: the publish outbox (push the branch, open the pull
//     request, exactly once).
//
// Here, by stage: intake (submit.go, chat.go, principal.go, authority.go,
// schedules.go and schedulesubmit.go for the schedules' runs); a run
// (worker.go claims it, hands it to a taskrun.Run and records how it
// ended, agentrun.go and goal.go assemble the session and run it,
// spend.go reads its spend, control.go steers and cancels it, workdir.go
// and workdir_git.go prepare its directory); what a session is given
// (instructions.go, memory.go, history.go, recipes.go, mcpprompts.go,
// plugins.go, standing.go); waiting for people (broker.go, approvals.go,
// approvalttl.go, planapproval.go, prapproval.go, budgetask.go); after
// the run (handoff.go publishes, ci.go); the node's life (service.go
// starts and stops it, nodes.go and handover.go are the service's side of
// package cluster, events.go writes and streams events).
package runner
