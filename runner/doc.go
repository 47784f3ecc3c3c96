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
// the conversation from the store and runs or continues it. Every message is
// persisted as it is appended and every other step becomes an event in the
// task's log, which Subscribe streams to the HTTP API and the chat relays.
package runner
