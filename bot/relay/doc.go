// Package relay is the chat relay: it turns messages from chat transports
// into runner tasks, keeps one status message per task edited in place,
// posts approval requests with buttons and decides them on click after
// checking the clicker's authority, and posts the final report.
//
// Everything durable lives in the relay's Store (delivery receipts and
// dedupe, thread↔task map, posted message ids; the service's store
// implements it), so a restarted relay starts nothing twice and edits
// rather than re-posts. Tasks, approvals and roles are the service's: the
// relay reads and changes them through runner.Service only. A platform outage delays the relay; it never blocks
// a task, because the relay only reads the task's event log.
package relay
