// Package store is the runner's durable state: tasks and their intake dedupe
// keys, the per-task event log and counters, the write-ahead tool journal
// (each step's messages, journal entries and events written together), the
// persisted transcript and goal state, approvals with their audit trail and
// standing grants, schedules, API tokens, roles and dashboard sessions, the
// nodes of a cluster with their hand-overs and scratch moves, the chat
// relay's receipts, posts and leases (behind the relay's own interface),
// spend, and the River job queue that hands tasks to workers.
//
// One Store runs on either an embedded SQLite file (one machine) or a shared
// Postgres database (several nodes). Both use the same schema and the same
// SQL, versioned by one migration path (River's migrations plus ours), so the
// rest of the runner never branches on the database.
//
// Every state change that other nodes race on is a single compare-and-swap
// statement (task state, approval decision), so correctness never depends on
// in-process locks. Times are stored as Unix microseconds (UTC) and JSON as
// text, which keeps one SQL text valid on both databases.
package store
