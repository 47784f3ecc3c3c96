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
package runner
