package store

// migration is one forward step of our schema. Versions are dense, start at 1
// and never change once released: fix a mistake with a new migration.
type migration struct {
	version int
	// sql runs on both databases unless postgres is set, in which case sql is
	// SQLite's text and postgres is Postgres'.
	sql      string
	postgres string
}

// migrations is the ordered list of schema steps. The SQL sticks to the
// common subset of SQLite and Postgres: TEXT, INTEGER, BIGINT, no serials
// (sequence numbers come from counter columns), times as BIGINT Unix
// microseconds, JSON as TEXT, booleans as INTEGER 0/1.
var migrations = []migration{
	{version: 1, sql: `
CREATE TABLE tasks (
	id           TEXT PRIMARY KEY,
	source       TEXT NOT NULL,
	requester    TEXT NOT NULL,
	prompt       TEXT NOT NULL,
	goal         INTEGER NOT NULL DEFAULT 0,
	plan_first   INTEGER NOT NULL DEFAULT 0,
	workspace    TEXT NOT NULL DEFAULT '',
	posture      TEXT NOT NULL DEFAULT '',
	notify       TEXT NOT NULL DEFAULT '[]',
	state        TEXT NOT NULL,
	job_id       BIGINT,
	attempt      INTEGER NOT NULL DEFAULT 0,
	lease_owner  TEXT NOT NULL DEFAULT '',
	wake_pending INTEGER NOT NULL DEFAULT 0,
	event_seq    BIGINT NOT NULL DEFAULT 0,
	message_seq  BIGINT NOT NULL DEFAULT 0,
	result       TEXT,
	goal_state   TEXT,
	created_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL,
	started_at   BIGINT,
	finished_at  BIGINT
);
CREATE INDEX tasks_state_id ON tasks (state, id);
CREATE INDEX tasks_source_id ON tasks (source, id);
CREATE INDEX tasks_wake ON tasks (wake_pending);

CREATE TABLE dedupe_keys (
	source     TEXT NOT NULL,
	dedupe_key TEXT NOT NULL,
	task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (source, dedupe_key)
);

CREATE TABLE task_events (
	task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	seq        BIGINT NOT NULL,
	type       TEXT NOT NULL,
	payload    TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (task_id, seq)
);

CREATE TABLE task_messages (
	task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	seq        BIGINT NOT NULL,
	body       TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (task_id, seq)
);

CREATE TABLE tool_journal (
	task_id     TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	call_id     TEXT NOT NULL,
	tool        TEXT NOT NULL,
	args_hash   TEXT NOT NULL,
	args        TEXT NOT NULL,
	started_at  BIGINT NOT NULL,
	finished_at BIGINT,
	result      TEXT,
	is_error    INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (task_id, call_id)
);

CREATE TABLE approvals (
	id          TEXT PRIMARY KEY,
	task_id     TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	tool        TEXT NOT NULL,
	subject     TEXT NOT NULL,
	call_hash   TEXT NOT NULL,
	preview     TEXT NOT NULL,
	requester   TEXT NOT NULL,
	approvers   TEXT NOT NULL,
	state       TEXT NOT NULL,
	decision    TEXT NOT NULL DEFAULT '',
	decided_by  TEXT NOT NULL DEFAULT '',
	created_at  BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL,
	decided_at  BIGINT
);
CREATE INDEX approvals_state_expires ON approvals (state, expires_at);
CREATE INDEX approvals_task ON approvals (task_id);

CREATE TABLE approval_audit (
	id          TEXT PRIMARY KEY,
	approval_id TEXT NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
	task_id     TEXT NOT NULL,
	action      TEXT NOT NULL,
	actor       TEXT NOT NULL,
	detail      TEXT NOT NULL DEFAULT '',
	created_at  BIGINT NOT NULL
);
CREATE INDEX approval_audit_approval ON approval_audit (approval_id, created_at);
`},
	// 2: what the runner service needs beyond the intake: who may approve a
	// task, cancel/heartbeat columns a remote node's worker polls, task
	// grants restored on resume, a steering inbox that works across nodes,
	// and the offered scopes, chosen scope, note and one-time consumption
	// of approvals.
	{version: 2, sql: `
ALTER TABLE tasks ADD COLUMN approvers TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tasks ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN heartbeat_at BIGINT;
ALTER TABLE approvals ADD COLUMN scopes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE approvals ADD COLUMN scope TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN consumed_at BIGINT;
CREATE INDEX approvals_task_hash ON approvals (task_id, call_hash);

CREATE TABLE task_grants (
	task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	scope      TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (task_id, scope)
);

CREATE TABLE task_inbox (
	id          TEXT PRIMARY KEY,
	task_id     TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	requester   TEXT NOT NULL,
	body        TEXT NOT NULL,
	created_at  BIGINT NOT NULL,
	consumed_at BIGINT
);
CREATE INDEX task_inbox_pending ON task_inbox (task_id, consumed_at);
`},
	// 3: API principals. A token's secret is never stored, only its
	// SHA-256, so a copy of the database grants nobody access; the name is
	// the principal id ("token:<name>") tasks and decisions record.
	{version: 3, sql: `
CREATE TABLE tokens (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL UNIQUE,
	role         TEXT NOT NULL,
	max_posture  TEXT NOT NULL,
	secret_hash  TEXT NOT NULL UNIQUE,
	created_at   BIGINT NOT NULL,
	revoked_at   BIGINT,
	last_used_at BIGINT
);
`},
	// 4: the durable state of [[schedules]]. anchor is the last occurrence
	// handled (fired, skipped or missed): the next tick due is the first
	// after it, and moving it is the compare-and-swap that lets exactly one
	// node fire an occurrence. settled says whether the last run's end was
	// counted towards failures.
	{version: 4, sql: `
CREATE TABLE schedules (
	name            TEXT PRIMARY KEY,
	anchor          BIGINT NOT NULL,
	paused          INTEGER NOT NULL DEFAULT 0,
	paused_reason   TEXT NOT NULL DEFAULT '',
	failures        INTEGER NOT NULL DEFAULT 0,
	last_run_at     BIGINT,
	last_task_id    TEXT NOT NULL DEFAULT '',
	last_outcome    TEXT NOT NULL DEFAULT '',
	settled         INTEGER NOT NULL DEFAULT 1,
	skipped         BIGINT NOT NULL DEFAULT 0,
	last_skipped_at BIGINT,
	missed          BIGINT NOT NULL DEFAULT 0,
	updated_at      BIGINT NOT NULL
);
`},
	// 5: webhook deliveries, for `reasonix webhooks list` and the API: who
	// sent what and what became of it (accepted, duplicate, ignored,
	// rejected and why). Never a body or a signature; a bounded history
	// per webhook (see RecordDelivery).
	{version: 5, sql: `
CREATE TABLE webhook_deliveries (
	id          TEXT PRIMARY KEY,
	webhook     TEXT NOT NULL,
	delivery_id TEXT NOT NULL DEFAULT '',
	event       TEXT NOT NULL DEFAULT '',
	outcome     TEXT NOT NULL,
	status      INTEGER NOT NULL,
	reason      TEXT NOT NULL DEFAULT '',
	task_id     TEXT NOT NULL DEFAULT '',
	created_at  BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook, created_at);
`},
	// 6: the chat relay. chat_events dedupes inbound platform deliveries
	// (Slack event_id, Telegram update_id) across restarts; chat_threads
	// maps a thread to the task living in it; chat_posts remembers what was
	// posted for a task under an idempotency key, so a restarted relay
	// edits its messages instead of posting them again; chat_cursors keeps
	// positions such as the Telegram poll offset.
	{version: 6, sql: `
CREATE TABLE chat_events (
	key        TEXT PRIMARY KEY,
	created_at BIGINT NOT NULL
);

CREATE TABLE chat_threads (
	transport  TEXT NOT NULL,
	channel    TEXT NOT NULL,
	thread     TEXT NOT NULL,
	task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (transport, channel, thread)
);

CREATE TABLE chat_posts (
	task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	key        TEXT NOT NULL,
	transport  TEXT NOT NULL,
	channel    TEXT NOT NULL,
	message_id TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (task_id, key)
);

CREATE TABLE chat_cursors (
	key        TEXT PRIMARY KEY,
	value      BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
`},
	// 7: roles of chat identities. A Slack or Telegram user is a principal
	// ("slack:T1/U2", "telegram:42") like an API token, and may hold a role
	// the same way; the relay asks here whether a clicker may approve.
	{version: 7, sql: `
CREATE TABLE principal_roles (
	principal  TEXT PRIMARY KEY,
	role       TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
`},
	// 8: the `reasonix serve` processes sharing this database, for
	// `reasonix nodes`: each stamps its row while it lives and marks it
	// draining, then stopped, when it shuts down.
	{version: 8, sql: `
CREATE TABLE nodes (
	id           TEXT PRIMARY KEY,
	version      TEXT NOT NULL DEFAULT '',
	addr         TEXT NOT NULL DEFAULT '',
	state        TEXT NOT NULL,
	max_tasks    INTEGER NOT NULL DEFAULT 0,
	started_at   BIGINT NOT NULL,
	heartbeat_at BIGINT NOT NULL
);
`},
	// 9: which node relays a task to chat. Several serve nodes share the
	// store and each would otherwise post the same status and report; the
	// owner renews its lease, and when it dies another node takes over
	// once the lease has run out.
	{version: 9, sql: `
CREATE TABLE chat_leases (
	task_id    TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
	owner      TEXT NOT NULL,
	expires_at BIGINT NOT NULL
);
`},
	// 10: a goal task's own cost budget (USD per slice; 0 = the configured
	// [agent] goal_budget_usd).
	{version: 10, sql: `
ALTER TABLE tasks ADD COLUMN budget_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
`},
	// 11: the web dashboard's sign-ins. A session and a one-time login code
	// are kept only as hashes of their secrets, bound to the API token
	// whose principal signed in, so revoking the token ends its sessions.
	{version: 11, sql: `
CREATE TABLE web_sessions (
	secret_hash TEXT PRIMARY KEY,
	token_id    TEXT NOT NULL,
	csrf        TEXT NOT NULL,
	created_at  BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL
);

CREATE TABLE login_codes (
	code_hash  TEXT PRIMARY KEY,
	token_id   TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT
);
`},
	// 12: a scratch task's files on their way to another node: a node
	// handing the task over stores its directory as a bounded gzipped tar,
	// and the node that runs it next unpacks and deletes it.
	{version: 12, sql: `
CREATE TABLE task_scratch (
	task_id    TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
	node       TEXT NOT NULL,
	archive    BLOB NOT NULL,
	created_at BIGINT NOT NULL
);
`, postgres: `
CREATE TABLE task_scratch (
	task_id    TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
	node       TEXT NOT NULL,
	archive    BYTEA NOT NULL,
	created_at BIGINT NOT NULL
);
`},
	// 13: which node long-polls a chat platform. Telegram serves one
	// getUpdates per bot token at a time (a second gets 409), so several
	// serve nodes take turns by lease, as chat_leases does for a task's
	// relay; that table's rows belong to tasks, so polls get their own.
	{version: 13, sql: `
CREATE TABLE chat_poll_leases (
	name       TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	expires_at BIGINT NOT NULL
);
`},
	// 14: two-phase chat event claims. A delivery is claimed (claimed_at,
	// claimed_by) before it is handled and finished (done_at) after, so a
	// node that dies in between does not make the platform's redelivery a
	// "duplicate": a claim older than the relay's reclaim window is taken
	// again. Rows from before this (claimed_at NULL) count as finished.
	// A handler that redoes its work must not steer a task twice, so an
	// inbox message may carry an idempotency key (NULL: none; NULLs never
	// conflict in a unique index, on either dialect).
	{version: 14, sql: `
ALTER TABLE chat_events ADD COLUMN claimed_at BIGINT;
ALTER TABLE chat_events ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE chat_events ADD COLUMN done_at BIGINT;

ALTER TABLE task_inbox ADD COLUMN dedupe_key TEXT;
CREATE UNIQUE INDEX task_inbox_dedupe ON task_inbox (task_id, dedupe_key);
`},
	// 15: durable receipt of chat deliveries. A Slack delivery is recorded
	// (claimed by the receiving node, with the inbound message as JSON in
	// payload) before it is acknowledged, so a node that dies after the
	// acknowledgement leaves a row another node's recovery pass handles.
	// NULL for older rows and deliveries claimed without a receipt. The
	// partial index keeps the recovery query to the unfinished receipts.
	{version: 15, sql: `
ALTER TABLE chat_events ADD COLUMN payload TEXT;
CREATE INDEX chat_events_unfinished ON chat_events (claimed_at) WHERE done_at IS NULL AND payload IS NOT NULL;
`},
	// 16: a node that is to continue a scratch task asks the node holding
	// its directory to hand it over through task_scratch (requested_at),
	// and that node answers (answered_at) once the archive is stored or
	// there is nothing to hand over. The index serves each node's look for
	// the requests addressed to it.
	{version: 16, sql: `
CREATE TABLE scratch_requests (
	task_id      TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
	node         TEXT NOT NULL,
	requested_at BIGINT NOT NULL,
	answered_at  BIGINT
);
CREATE INDEX scratch_requests_node ON scratch_requests (node) WHERE answered_at IS NULL;
`},
	// 17: who instructed the call an approval is about, besides the
	// requester (the authors of the messages the task had read), so that
	// they cannot approve it either.
	{version: 17, sql: `
ALTER TABLE approvals ADD COLUMN instructors TEXT NOT NULL DEFAULT '[]';
`},
	// 18: a task's event counter moves off its wide tasks row, which was
	// rewritten for every batch of events only to move the counter. The
	// row here is made by the task's first append after this migration,
	// seeded from tasks.event_seq (which then stays as it is). Messages
	// need no counter any more: their numbers are read from the
	// conversation itself (the largest seq) in the statement that appends.
	{version: 18, sql: `
CREATE TABLE task_counters (
	task_id   TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
	event_seq BIGINT NOT NULL
);
`},
	// 19: whether a journaled call's effect is in a checkpoint of the
	// task's workspace (a commit on its branch made by Release or Finish).
	// A node that restores the workspace from its branch tells the model
	// which calls' changes are missing: those not checkpointed. Calls
	// journaled before this migration are taken as checkpointed, so an
	// upgrade reports no old call as lost.
	{version: 19, sql: `
ALTER TABLE tool_journal ADD COLUMN checkpointed INTEGER NOT NULL DEFAULT 0;
UPDATE tool_journal SET checkpointed = 1;
`},
	// 20: the publish outbox, one row per task whose branch is handed over
	// to a forge. state moves pending → pushed → done; a row not done is
	// driven again (after a crash, by any node holding its lease) and finds
	// the pull request it may already have opened by its head branch.
	{version: 20, sql: `
CREATE TABLE publishes (
	task_id     TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
	workspace   TEXT NOT NULL,
	branch      TEXT NOT NULL,
	commit_sha  TEXT NOT NULL,
	state       TEXT NOT NULL,
	pr_number   INTEGER NOT NULL DEFAULT 0,
	pr_url      TEXT NOT NULL DEFAULT '',
	pr_state    TEXT NOT NULL DEFAULT '',
	error       TEXT NOT NULL DEFAULT '',
	attempts    INTEGER NOT NULL DEFAULT 0,
	lease_owner TEXT NOT NULL DEFAULT '',
	lease_until BIGINT NOT NULL DEFAULT 0,
	created_at  BIGINT NOT NULL,
	updated_at  BIGINT NOT NULL
);
CREATE INDEX publishes_state ON publishes (state, lease_until);
`},
	// 21: standing grants ("Allow always"): durable rules in allow form
	// for every task of a workspace, a schedule or a webhook, across
	// tasks and nodes (task_grants holds one task's). A revoked grant
	// keeps its row (revoked_at) as the record of who allowed what.
	// standing_grant_epoch counts changes (add, revoke) in the same
	// transaction, so a node's in-memory copy can tell from one row read
	// whether it is stale. At most one live grant per target and scope.
	{version: 21, sql: `
CREATE TABLE standing_grants (
	id           TEXT PRIMARY KEY,
	scope        TEXT NOT NULL,
	grant_for    TEXT NOT NULL,
	name         TEXT NOT NULL,
	granted_by   TEXT NOT NULL,
	approval_id  TEXT NOT NULL DEFAULT '',
	task_id      TEXT NOT NULL DEFAULT '',
	created_at   BIGINT NOT NULL,
	expires_at   BIGINT,
	revoked_at   BIGINT,
	revoked_by   TEXT NOT NULL DEFAULT '',
	uses         BIGINT NOT NULL DEFAULT 0,
	last_used_at BIGINT
);
CREATE UNIQUE INDEX standing_grants_live ON standing_grants (grant_for, name, scope) WHERE revoked_at IS NULL;
CREATE TABLE standing_grant_epoch (
	id INTEGER PRIMARY KEY,
	n  BIGINT NOT NULL
);
INSERT INTO standing_grant_epoch (id, n) VALUES (1, 0);
`},
	// 22: when a schedule's run last succeeded, for the metric operators
	// alert on (reasonix_schedule_last_success_timestamp_seconds; the last
	// run's outcome alone forgets it after one failure), and the last
	// occurrence dropped for being late, so a drop is announced once.
	{version: 22, sql: `
ALTER TABLE schedules ADD COLUMN last_success_at BIGINT;
ALTER TABLE schedules ADD COLUMN last_missed_at BIGINT;
`},
	// 23: memories, the facts an agent keeps between tasks (remember,
	// forget, memory and the recall before each turn). A memory belongs to
	// one scope: a workspace (every task of it) or a user principal (that
	// principal's tasks). Forgetting keeps the row (forgotten_at) as the
	// record of who knew what and when. memory_epoch counts changes (add,
	// forget) in the same transaction, so a node's recall index can tell
	// from one row read whether it is stale. At most one live memory of the
	// same text per scope.
	{version: 23, sql: `
CREATE TABLE memories (
	id           TEXT PRIMARY KEY,
	scope_kind   TEXT NOT NULL,
	scope_name   TEXT NOT NULL,
	text         TEXT NOT NULL,
	created_by   TEXT NOT NULL,
	task_id      TEXT NOT NULL DEFAULT '',
	created_at   BIGINT NOT NULL,
	forgotten_at BIGINT,
	forgotten_by TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX memories_live ON memories (scope_kind, scope_name, text) WHERE forgotten_at IS NULL;
CREATE INDEX memories_scope ON memories (scope_kind, scope_name, created_at);
CREATE TABLE memory_epoch (
	id INTEGER PRIMARY KEY,
	n  BIGINT NOT NULL
);
INSERT INTO memory_epoch (id, n) VALUES (1, 0);
`},
	// 24: when an approval was last reminded of. A request without a
	// deadline (approval_ttl = "none", stored as expires_at = 0) is
	// reminded of again and again; the relay records each reminder here
	// with a compare-and-swap before posting it, so a restart does not
	// repeat one and two nodes never post the same one.
	{version: 24, sql: `
ALTER TABLE approvals ADD COLUMN reminded_at BIGINT;
`},
	// 25: a task's ablation arm (seed 3.17): "subagent" runs a goal as the
	// control arm, without the task and fleet tools.
	{version: 25, sql: `
ALTER TABLE tasks ADD COLUMN ablate TEXT NOT NULL DEFAULT '';
`},
	// 26: retention ([runner] retain). pruned_at is when a finished task's
	// per-step history (events, messages, tool journal) was last pruned;
	// a task continued after that finishes again later than it was
	// pruned, so its new history is pruned in its turn. The index serves
	// the pruner's look for finished tasks, oldest first.
	{version: 26, sql: `
ALTER TABLE tasks ADD COLUMN pruned_at BIGINT;
CREATE INDEX tasks_finished ON tasks (finished_at, id);
`},
	// 27: a review delivery names a pull request, not a task; the
	// service finds the task it steers by its workspace and PR number
	// (PublishOfPR), which otherwise scans every publish record.
	{version: 27, sql: `
CREATE INDEX publishes_pr ON publishes (workspace, pr_number);
`},
	// 28: a claim in one statement on Postgres (ClaimTask). The guard on
	// the workspace's running tasks must count after the workspace's claim
	// lock is held, with a snapshot taken then, not at the statement's
	// start: a VOLATILE function's queries each take a fresh snapshot, so
	// the function takes the lock and then counts. SQLite needs nothing:
	// its claim is a transaction holding the database's write lock.
	{version: 28, sql: ``, postgres: `
CREATE FUNCTION reasonix_workspace_running(ws TEXT, task TEXT, running TEXT) RETURNS BIGINT
LANGUAGE plpgsql VOLATILE AS $$
DECLARE n BIGINT; BEGIN
	PERFORM pg_advisory_xact_lock(hashtextextended('reasonix/workspace/' || ws, 0)); SELECT count(*) INTO n
	FROM tasks o WHERE o.workspace = ws AND o.state = running AND o.id <> task; RETURN n; END
$$
`},
}
