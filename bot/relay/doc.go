// Package relay is the chat relay: it turns messages from chat transports
// into runner tasks, keeps one status message per task edited in place,
// posts approval requests with buttons and decides them on click after
// checking the clicker's authority, and posts the final report.
//
// Everything durable lives in the relay's Store (delivery receipts and
// dedupe, thread↔task map, posted message ids; the service's store
// implements it), so a restarted relay starts nothing twice and edits
// rather than re-posts. Tasks, approvals and roles are the service's: the
// relay reads and changes them through runner.Service only. A platform
// outage delays the relay; it never blocks a task, because the relay only
// reads the task's event log.
//
// # Intake: how "recorded, then acknowledged" and "handled once" are kept
//
// The SPEC (§1.5) promises what a user sees; this is how. A transport
// hands each delivery to Receive (bot.Receiver) before it acknowledges it
// to its platform. Receive claims the delivery's platform id (Slack's
// event_id, Telegram's update_id) in the store with the node's name and
// stores the message with the claim, in one write; only then may the
// transport acknowledge. The dedupe is two-phase: a claim is marked done
// once the handling finished. A redelivery of a done delivery is dropped;
// one another node claimed and has not finished is left to that node.
//
// Every node running the relay makes a recovery pass every 5 s: a claim
// older than 15 s whose delivery is not done (its node died, its queue had
// no room) is taken over and handled from the stored message, so a
// delivery is late by at most about 20 s. A handling that fails (the
// runner unavailable) gives its claim up at once, so the next pass tries
// again; one that keeps failing is retried for an hour. Handling a
// delivery twice repeats nothing the user sees twice, except a command's
// answer: the task, a steer and the acknowledgement are keyed by the
// platform id. The elected leader deletes delivery records a week after
// their last mark.
//
// # Several nodes
//
// Each task is relayed by the holder of a lease per task in the store,
// renewed every 5 s and valid for 15 s. A node that stops gives its leases
// up at once; a node that dies (or loses the database) stops relaying
// within 10 s, before its lease runs out, and another node takes the task
// over when the lease has run out, re-rendering from the task's log: the
// messages posted already are found by their keys and edited, not posted
// again. Telegram long polling is done by the holder of the poll lease
// (renewed every 5 s, valid for 15 s; the others try every 5 s). A poller
// that stops finishes the batch in hand, saves the offset and gives the
// lease up; when it dies, the next holder continues from the stored
// offset: updates fetched but not recorded are fetched again, recorded ones
// are deduped, and one recorded but not finished goes to the recovery pass.
package relay
