package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/internal/ids"
	"reasonix/policy"
)

// Source is where a task came from.
type Source string

// The intake sources.
const (
	SourceAPI      Source = "api"
	SourceCLI      Source = "cli"
	SourceWebhook  Source = "webhook"
	SourceCron     Source = "cron"
	SourceSlack    Source = "slack"
	SourceTelegram Source = "telegram"
)

var sources = []Source{SourceAPI, SourceCLI, SourceWebhook, SourceCron, SourceSlack, SourceTelegram}

// State is where a task is in its life.
type State string

// The task states. Queued, Running, WaitingApproval and WaitingCI are
// live; the rest are terminal (see Terminal).
const (
	StateQueued          State = "queued"
	StateRunning         State = "running"
	StateWaitingApproval State = "waiting_approval"
	// StateWaitingCI: the task's work is published and its pull request
	// waits for CI on its head commit ([workspaces.publish] wait_ci); like
	// an approval, the wait holds no worker.
	StateWaitingCI       State = "waiting_ci"
	StateSucceeded       State = "succeeded"
	StateFailed          State = "failed"
	StateBlocked         State = "blocked"
	StateCancelled       State = "cancelled"
	StateInterrupted     State = "interrupted"
	StateBudgetExhausted State = "budget_exhausted"
)

var states = []State{StateQueued, StateRunning, StateWaitingApproval, StateWaitingCI, StateSucceeded, StateFailed,
	StateBlocked, StateCancelled, StateInterrupted, StateBudgetExhausted}

// Terminal reports whether a task in state s is finished for good.
// Interrupted is terminal: a resumed task is continued by a new run that
// moves it back to running explicitly.
func (s State) Terminal() bool {
	switch s {
	case StateQueued, StateRunning, StateWaitingApproval, StateWaitingCI:
		return false
	}
	return true
}

// NotifyTarget is one place a task reports to, e.g. a Slack thread.
type NotifyTarget struct {
	Transport string `json:"transport"`        // "slack", "telegram", "webhook", …
	Channel   string `json:"channel"`          // channel or chat id
	Thread    string `json:"thread,omitempty"` // thread ts or reply-to message id
}

// Result is what a finished task produced.
type Result struct {
	Summary     string      `json:"summary,omitempty"`
	FinalAnswer string      `json:"final_answer,omitempty"`
	DiffStat    string      `json:"diff_stat,omitempty"`
	Branch      string      `json:"branch,omitempty"`
	Tokens      agent.Usage `json:"tokens"`
	// Cost is the USD of the calls whose model has prices, by each call's
	// own model. UnpricedTokens counts the tokens of calls on models
	// without prices; while it is above 0 the cost is incomplete (a lower
	// bound, CostComplete false) and people are shown "unpriced". Models
	// breaks the tokens and the cost down by model reference.
	Cost           float64              `json:"cost"`
	CostComplete   bool                 `json:"cost_complete"`
	UnpricedTokens int                  `json:"unpriced_tokens,omitempty"`
	Models         map[string]ModelCost `json:"models,omitempty"`
	DurationMS     int64                `json:"duration_ms"`
	// Error is the end's short code, with the log reference of the
	// internal detail when there is one: "provider.rejected (ref 1a2b3c4d)".
	Error string `json:"error,omitempty"`
	// Reason says in a sentence, safe for whoever asked, why the task
	// ended as it did.
	Reason string `json:"reason,omitempty"`
	// Publish says what became of the task's branch under a workspace's
	// [workspaces.publish]: "pending" (being handed over), "pr" (PR holds
	// the pull request), "awaiting_approval" (pushed; the pull request
	// waits for a person, mode "ask"), "branch" (pushed, no pull request
	// asked for, or one declined),
	// "unchanged" (nothing to publish: the task changed nothing) or
	// "failed" (PublishError says why). "" without publishing.
	Publish      string `json:"publish,omitempty"`
	PublishError string `json:"publish_error,omitempty"`
	// PR is the pull (merge) request the branch was published as.
	PR *PullRequest `json:"pr,omitempty"`
	// Deliverables are the files the model declared for people (present).
	Deliverables []agent.Deliverable `json:"deliverables,omitempty"`
	// Delegation is the task's ten delegation counters (seed §3.17) over
	// all its runs, plain and goal tasks alike; nil on results stored
	// before they were kept here.
	Delegation *goals.Counters `json:"delegation,omitempty"`
}

// PullRequest is a task's pull request as result.pr shows it.
type PullRequest struct {
	URL    string `json:"url"`
	Number int    `json:"number"`
	State  string `json:"state"` // open, closed or merged, when it was last seen
	// CI is the CI on the request's head commit, under wait_ci; nil
	// without.
	CI *CI `json:"ci,omitempty"`
	// Conflicts names the files the published commit conflicts with the
	// base in, as the base (BaseCommit) stood on the forge at publish
	// time; none when it merges cleanly. Continuing the task rebases it.
	Conflicts  []string `json:"conflicts,omitempty"`
	BaseCommit string   `json:"base_commit,omitempty"`
	// Mergeable is the forge's own verdict on merging the request into
	// its base when it was published: clean, conflict, or unknown (not
	// computed in time); empty when the forge was not asked. A conflict
	// it reports counts even where Conflicts names no file.
	Mergeable string `json:"mergeable,omitempty"`
}

// CI is what a task that waits for CI ([workspaces.publish] wait_ci)
// knows of the checks on its pull request's head commit.
type CI struct {
	// State is waiting (no verdict yet), fixing (a failure was fed back
	// to the task), success, failure (still failing after the fix
	// attempts), timeout (no verdict within ci_timeout) or error (the wait
	// could not go on: no pull request, publishing switched off).
	State  string    `json:"state"`
	Commit string    `json:"commit,omitempty"` // the commit the checks ran on
	Checks []CICheck `json:"checks,omitempty"`
	// Fixes counts the failures fed back to the task so far.
	Fixes int `json:"fixes,omitempty"`
	// Since is when the wait for Commit began; ci_timeout counts from it.
	Since time.Time `json:"since,omitzero"`
}

// CICheck is one check of a CI.
type CICheck struct {
	Name    string `json:"name"`
	State   string `json:"state"` // pending, success or failure
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
}

// CI states of a task (CI.State).
const (
	CIWaiting = "waiting"
	CIFixing  = "fixing"
	CISuccess = "success"
	CIFailure = "failure"
	CITimeout = "timeout"
	CIError   = "error"
)

// AblateSubagent is the one ablation arm (seed §3.17): a goal without the
// task and fleet tools.
const AblateSubagent = "subagent"

// NewTask is the intake of a task.
type NewTask struct {
	Source    Source // required
	Requester string // source-qualified id, e.g. "slack:U123"
	Prompt    string // required
	Goal      bool
	PlanFirst bool
	// PlanOnly: the task's first turn is the Coordinator's plan-only route
	// (the plan kept, nothing executed); not with Goal or PlanFirst.
	PlanOnly bool
	// BudgetUSD is a goal's cost budget per slice; 0 = [agent] goal_budget_usd.
	BudgetUSD float64
	// Ablate is the goal's ablation arm: "" or AblateSubagent.
	Ablate    string
	Workspace string
	Posture   policy.Posture
	Notify    []NotifyTarget
	// Approvers are the ids allowed to decide the task's approvals; empty
	// means the runner's default (e.g. the API token holder).
	Approvers []string
	// Events start the task's log, written in the transaction that creates
	// it: a worker that claims the task at once writes after them.
	Events []EventInput
}

// Task is a stored task.
type Task struct {
	ID         string
	Source     Source
	Requester  string
	Prompt     string
	Goal       bool
	PlanFirst  bool
	PlanOnly   bool    // the first turn only plans (NewTask.PlanOnly)
	BudgetUSD  float64 // a goal's cost budget per slice; 0 = the configured one
	Ablate     string  // "" or AblateSubagent: the goal runs without task and fleet
	Workspace  string
	Posture    policy.Posture
	Notify     []NotifyTarget
	Approvers  []string
	State      State
	JobID      int64  // the River job that runs it
	Attempt    int    // how many times it entered running
	LeaseOwner string // who runs it now (set through StateOpts)
	Result     *Result
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  time.Time // first time it entered running; zero before
	FinishedAt time.Time // when it entered a terminal state; zero before
}

const taskCols = `id, source, requester, prompt, goal, plan_first, workspace, posture, notify, state,
	job_id, attempt, lease_owner, result, created_at, updated_at, started_at, finished_at, approvers, budget_usd, ablate`

// moreRow is a row with more columns after a task's: Scan fills them into
// more.
type moreRow struct {
	row
	more []any
}

func (r moreRow) Scan(dest ...any) error { return r.row.Scan(append(dest, r.more...)...) }

func scanTask(r row) (Task, error) {
	var (
		t                 Task
		goal, planFirst   int
		notify            string
		jobID             sql.NullInt64
		result            sql.NullString
		created, updated  int64
		started, finished sql.NullInt64
		source, state     string
		approvers         string
	)
	err := r.Scan(&t.ID, &source, &t.Requester, &t.Prompt, &goal, &planFirst, &t.Workspace, &t.Posture,
		&notify, &state, &jobID, &t.Attempt, &t.LeaseOwner, &result, &created, &updated, &started, &finished, &approvers, &t.BudgetUSD, &t.Ablate)
	if err != nil {
		return Task{}, err
	}
	t.Source, t.State = Source(source), State(state)
	t.Goal, t.PlanFirst, t.PlanOnly = goal != 0, planFirst == planModeFirst, planFirst == planModeOnly
	t.JobID = jobID.Int64
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	t.StartedAt, t.FinishedAt = fromNullMicros(started), fromNullMicros(finished)
	if err := json.Unmarshal([]byte(notify), &t.Notify); err != nil {
		return Task{}, fmt.Errorf("store: task %s notify targets: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(approvers), &t.Approvers); err != nil {
		return Task{}, fmt.Errorf("store: task %s approvers: %w", t.ID, err)
	}
	if result.Valid {
		t.Result = new(Result)
		if err := json.Unmarshal([]byte(result.String), t.Result); err != nil {
			return Task{}, fmt.Errorf("store: task %s result: %w", t.ID, err)
		}
	}
	return t, nil
}

func (nt *NewTask) validate() error {
	if !slices.Contains(sources, nt.Source) {
		return invalid("task source %q is not one of %v", nt.Source, sources)
	}
	if strings.TrimSpace(nt.Prompt) == "" {
		return invalid("task prompt is empty")
	}
	if !(nt.BudgetUSD >= 0) || math.IsInf(nt.BudgetUSD, 0) {
		return invalid("task budget_usd must be a non-negative amount")
	}
	if nt.Ablate != "" && nt.Ablate != AblateSubagent {
		return invalid("task ablate must be empty or %q", AblateSubagent)
	}
	if nt.PlanOnly && (nt.Goal || nt.PlanFirst) {
		return invalid("a plan-only task is neither a goal nor plan-first")
	}
	return nil
}

// The plan_first column holds the task's planning mode: none, plan-first
// (a goal whose plan is approved before it runs) or plan-only (a plain
// task whose first turn only plans). One column, since the two exclude
// each other.
const (
	planModeNone  = 0
	planModeFirst = 1
	planModeOnly  = 2
)

// planMode is nt's plan_first column.
func (nt *NewTask) planMode() int {
	switch {
	case nt.PlanFirst:
		return planModeFirst
	case nt.PlanOnly:
		return planModeOnly
	}
	return planModeNone
}

// CreateTask is the intake: in ONE transaction it records the dedupe keys
// (source, key), inserts the task in state queued, and inserts its
// River job. Acknowledge the sender only after it returns nil: then all three
// are committed, and a crash loses nothing.
//
// If (nt.Source, key) was seen before for any of dedupeKeys, nothing is
// written and the task of that key is returned with created=false; when
// the task is created, every key is recorded for it. Several keys let one
// intake be recognised by more than one identity (a webhook's delivery id
// and its signature). Empty keys are ignored; none disables
// deduplication. If any insert fails, none of them happened.
func (s *Store) CreateTask(ctx context.Context, nt NewTask, dedupeKeys ...string) (task Task, created bool, err error) {
	if err := nt.validate(); err != nil {
		return Task{}, false, err
	}
	err = s.inTx(ctx, func(tx txn) error {
		task, created, err = s.createTaskTx(ctx, tx, nt, dedupeKeys...)
		return err
	})
	if errors.Is(err, errDuplicate) {
		return task, false, nil
	}
	if err != nil {
		return Task{}, false, err
	}
	return task, created, nil
}

// errDuplicate rolls back an intake whose later key belongs to an earlier
// task; the task found is returned beside it.
var errDuplicate = errors.New("store: duplicate intake")

// createTaskTx is CreateTask's body inside tx, for intakes that change
// more in the same transaction (a schedule's fired occurrence). nt must be
// validated. A duplicate found on a key after the first returns the
// existing task with errDuplicate, so that the caller rolls back the keys
// already written.
func (s *Store) createTaskTx(ctx context.Context, tx txn, nt NewTask, dedupeKeys ...string) (task Task, created bool, err error) {
	notify := nt.Notify
	if notify == nil {
		notify = []NotifyTarget{}
	}
	notifyJSON, err := json.Marshal(notify)
	if err != nil {
		return Task{}, false, fmt.Errorf("store: encode notify targets: %w", err)
	}
	approvers := nt.Approvers
	if approvers == nil {
		approvers = []string{}
	}
	approversJSON, err := json.Marshal(approvers)
	if err != nil {
		return Task{}, false, fmt.Errorf("store: encode approvers: %w", err)
	}
	keys := make([]string, 0, len(dedupeKeys))
	for _, k := range dedupeKeys {
		if k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	// One order for every intake, so two on Postgres that share keys wait
	// for each other instead of deadlocking.
	slices.Sort(keys)
	now := s.now()
	id := ids.Sortable("t_", now)
	for i, k := range keys {
		// ON CONFLICT DO NOTHING rather than catching a unique violation:
		// on Postgres a concurrent duplicate waits for the first
		// transaction and then sees its row, with no aborted transaction.
		n, err := tx.exec(ctx, `INSERT INTO dedupe_keys (source, dedupe_key, task_id, created_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (source, dedupe_key) DO NOTHING`,
			string(nt.Source), k, id, micros(now))
		if err != nil {
			return Task{}, false, fmt.Errorf("store: insert dedupe key: %w", err)
		}
		if n == 1 {
			continue
		}
		var existing string
		if err := tx.queryRow(ctx, "SELECT task_id FROM dedupe_keys WHERE source = ? AND dedupe_key = ?",
			string(nt.Source), k).Scan(&existing); err != nil {
			return Task{}, false, fmt.Errorf("store: read dedupe key: %w", err)
		}
		if task, err = getTask(ctx, tx, existing); err != nil {
			return Task{}, false, err
		}
		if i > 0 {
			// The keys before this one were written for a task that will
			// not exist: the caller rolls them back.
			return task, false, errDuplicate
		}
		return task, false, nil
	}
	res, err := s.river.insertTx(ctx, tx, TaskArgs{TaskID: id, Goal: nt.Goal})
	s.jobs.signal("") // see Queue.doze
	if err != nil {
		return Task{}, false, fmt.Errorf("store: insert job: %w", err)
	}
	evs, err := s.newEvents(id, nt.Events)
	if err != nil {
		return Task{}, false, err
	}
	insert := `INSERT INTO tasks (id, source, requester, prompt, goal, plan_first,
			workspace, posture, notify, state, job_id, created_at, updated_at, approvers, budget_usd, event_seq, ablate)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ` + taskCols
	args := []any{id, string(nt.Source), nt.Requester, nt.Prompt, boolInt(nt.Goal), nt.planMode(),
		nt.Workspace, nt.Posture, string(notifyJSON), string(StateQueued), res.Job.ID, micros(now), micros(now),
		string(approversJSON), nt.BudgetUSD, int64(len(evs)), nt.Ablate}
	if s.dialect == dialectPostgres && len(evs) > 0 && len(evs) <= 100 {
		// The task and its first events in one statement, numbered 1..n.
		values, vargs := eventValues(evs)
		task, err = scanTask(tx.queryRow(ctx, `WITH t AS (`+insert+`),
			e AS (INSERT INTO task_events (task_id, seq, type, payload, created_at)
				SELECT t.id, v.i, v.t, v.p, v.at FROM t, `+values+`)
			SELECT `+taskCols+` FROM t`, append(args, vargs...)...))
		if err != nil {
			return Task{}, false, fmt.Errorf("store: insert task: %w", err)
		}
		return task, true, nil
	}
	task, err = scanTask(tx.queryRow(ctx, insert, args...))
	if err != nil {
		return Task{}, false, fmt.Errorf("store: insert task: %w", err)
	}
	if err := insertEvents(ctx, tx, evs, int64(len(evs))); err != nil {
		return Task{}, false, err
	}
	return task, true, nil
}

// Task returns the task with id, or an error wrapping ErrNotFound.
func (s *Store) Task(ctx context.Context, id string) (Task, error) {
	return getTask(ctx, s.db, id)
}

// TaskStates returns the state of each task of ids that exists, in one
// read: a list that needs only where each task stands (the schedules'
// health, say) need not read every task's whole row.
func (s *Store) TaskStates(ctx context.Context, ids []string) (map[string]State, error) {
	out := make(map[string]State, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rs, err := s.db.query(ctx, "SELECT id, state FROM tasks WHERE id IN ("+placeholders(len(ids))+")", idArgs(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: read task states: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		var id string
		var st State
		if err := rs.Scan(&id, &st); err != nil {
			return nil, fmt.Errorf("store: read task states: %w", err)
		}
		out[id] = st
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: read task states: %w", err)
	}
	return out, nil
}

func getTask(ctx context.Context, q querier, id string) (Task, error) {
	t, err := scanTask(q.queryRow(ctx, "SELECT "+taskCols+" FROM tasks WHERE id = ?", id))
	if isNoRows(err) {
		return Task{}, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Task{}, fmt.Errorf("store: read task %s: %w", id, err)
	}
	return t, nil
}

// StateOpts are the optional parts of a state change.
type StateOpts struct {
	// Result, when set, is stored with the change (normally with a terminal
	// state).
	Result *Result
	// LeaseOwner, when set, records who runs the task (a node or worker id).
	LeaseOwner *string
	// Events are appended to the task's log with the change, in its
	// transaction, and only if it happens: a state change and the events
	// announcing it (a chat thread closes on the terminal one) are never
	// one without the other, and come in the order the changes did.
	Events []EventInput
	// Checkpoint marks the task's journaled calls checkpointed
	// (MarkCheckpointed) with the change, whether or not it happens: the
	// workspace's commit that holds their effects is made by then. On
	// Postgres it is part of the change's one statement.
	Checkpoint bool
	// InboxWaiting, when set, receives whether the task has untaken
	// messages (HasInbox) as the change leaves it, read with the change.
	InboxWaiting *bool

	// guard is more SQL ANDed to the change's WHERE (its placeholders
	// bound by guardArgs), for a change with a condition of its own: the
	// claim's room in its workspace.
	guard     string
	guardArgs []any
}

// SetTaskState moves task id to state to if, and only if, its current state
// is one of from — a compare-and-swap that is safe across nodes. Entering
// running counts an attempt and stamps StartedAt the first time; entering a
// terminal state stamps FinishedAt. It returns the updated task, an error
// wrapping ErrNotFound, or a *StateError (matching ErrStateConflict) naming
// the state it found. opts may be nil.
func (s *Store) SetTaskState(ctx context.Context, id string, from []State, to State, opts *StateOpts) (Task, error) {
	return s.setTaskState(ctx, s.db, id, from, to, opts)
}

func (s *Store) setTaskState(ctx context.Context, q querier, id string, from []State, to State, opts *StateOpts) (Task, error) {
	if !slices.Contains(states, to) {
		return Task{}, invalid("task state %q is not one of %v", to, states)
	}
	if len(from) == 0 {
		return Task{}, invalid("no from states for task %s", id)
	}
	if opts == nil {
		opts = &StateOpts{}
	}
	now := micros(s.now())
	var result sql.NullString
	if opts.Result != nil {
		b, err := json.Marshal(opts.Result)
		if err != nil {
			return Task{}, fmt.Errorf("store: encode result: %w", err)
		}
		result = sql.NullString{String: string(b), Valid: true}
	}
	var lease sql.NullString
	if opts.LeaseOwner != nil {
		lease = sql.NullString{String: *opts.LeaseOwner, Valid: true}
	}
	running := boolInt(to == StateRunning)
	var finished sql.NullInt64
	if to.Terminal() {
		finished = sql.NullInt64{Int64: now, Valid: true}
	}
	evs, err := s.newEvents(id, opts.Events)
	if err != nil {
		return Task{}, err
	}
	pg := s.dialect == dialectPostgres
	var args []any
	// The checkpoint is a statement of its own on SQLite; on Postgres it is
	// a CTE of the change's statement (ck), run whether the change happens
	// or not, as MarkCheckpointed would be.
	ck := ""
	if opts.Checkpoint {
		if pg {
			ck = `k AS (` + markCheckpointedSQL + `)`
			args = append(args, id)
		} else if err := markCheckpointed(ctx, q, id); err != nil {
			return Task{}, err
		}
	}
	// Entering running stamps the heartbeat too: the task's node is alive
	// as it claims it, and an older attempt's stamp must not make the new
	// one look stale (cluster.HandOver.Stale reads heartbeat_at first).
	args = append(args, string(to), now, running, running, now, finished, result, lease, running, now, id)
	for _, f := range from {
		args = append(args, string(f))
	}
	args = append(args, opts.guardArgs...)
	ret := taskCols
	var inbox int
	scan := func(r row) (Task, error) { return scanTask(r) }
	if opts.InboxWaiting != nil {
		ret += `, CASE WHEN EXISTS (SELECT 1 FROM task_inbox i WHERE i.task_id = tasks.id AND i.consumed_at IS NULL)
			THEN 1 ELSE 0 END AS inbox_waiting`
		scan = func(r row) (Task, error) { return scanTask(moreRow{r, []any{&inbox}}) }
	}
	upd := `UPDATE tasks SET state = ?, updated_at = ?,
			attempt = attempt + ?,
			started_at = CASE WHEN ? = 1 THEN COALESCE(started_at, ?) ELSE started_at END,
			finished_at = COALESCE(?, finished_at),
			result = COALESCE(?, result),
			lease_owner = COALESCE(?, lease_owner),
			heartbeat_at = CASE WHEN ? = 1 THEN ? ELSE heartbeat_at END
		WHERE id = ? AND state IN (?` + strings.Repeat(", ?", len(from)-1) + `)` + opts.guard + `
		RETURNING ` + ret
	var t Task
	switch {
	case len(evs) == 0 && ck != "":
		t, err = scan(q.queryRow(ctx, `WITH `+ck+` `+upd, args...))
	case len(evs) == 0:
		t, err = scan(q.queryRow(ctx, upd, args...))
	case pg:
		// One statement, as without events: the counter moves (counterSQL,
		// reading the task through u so that a refused change moves
		// nothing) and the events are numbered from it.
		n := int64(len(evs))
		values, vargs := eventValues(evs)
		args = append(append(args, n, n, n), vargs...)
		if ck != "" {
			ck += ","
		}
		sel := taskCols
		if opts.InboxWaiting != nil {
			sel += ", inbox_waiting"
		}
		t, err = scan(q.queryRow(ctx, `WITH `+ck+` u AS (`+upd+`, event_seq),
			c AS (INSERT INTO task_counters (task_id, event_seq) SELECT u.id, u.event_seq + ? FROM u
				ON CONFLICT (task_id) DO UPDATE SET event_seq = task_counters.event_seq + ?
				RETURNING event_seq AS n),
			e AS (INSERT INTO task_events (task_id, seq, type, payload, created_at)
				SELECT u.id, c.n - ? + v.i, v.t, v.p, v.at FROM u, c, `+values+`)
			SELECT `+sel+` FROM u`, args...))
	default:
		t, err = s.setStateWithEvents(ctx, q, upd, args, evs, scan)
	}
	if err == nil {
		if opts.InboxWaiting != nil {
			*opts.InboxWaiting = inbox != 0
		}
		return t, nil
	}
	if !isNoRows(err) {
		return Task{}, fmt.Errorf("store: set task %s state: %w", id, err)
	}
	cur, err := getTask(ctx, q, id)
	if err != nil {
		return Task{}, err
	}
	return Task{}, &StateError{TaskID: id, Current: cur.State}
}

// setStateWithEvents runs upd, a state change returning the task, moves
// its event counter and inserts evs numbered by it, in q's transaction or
// a new one.
func (s *Store) setStateWithEvents(ctx context.Context, q querier, upd string, args []any, evs []Event, scan func(row) (Task, error)) (Task, error) {
	var t Task
	apply := func(tx querier) error {
		var err error
		if t, err = scan(tx.queryRow(ctx, upd, args...)); err != nil {
			return err
		}
		end, err := bumpEvents(ctx, tx, t.ID, int64(len(evs)))
		if err != nil {
			return err
		}
		return insertEvents(ctx, tx, evs, end)
	}
	var err error
	if tx, ok := q.(txn); ok {
		err = apply(tx)
	} else {
		err = s.inTx(ctx, func(tx txn) error { return apply(tx) })
	}
	return t, err // t is read after apply set it
}

// TaskFilter selects tasks for ListTasks. Zero fields do not filter.
type TaskFilter struct {
	States    []State
	Source    Source
	Requester string
	Workspace string
	// Search keeps tasks whose prompt contains it, ignoring case (ASCII).
	Search string
	// Cursor continues a listing: pass the previous page's Next.
	Cursor string
	// After keeps tasks newer than task id After (ids sort by creation).
	After string
	// Limit is the page size; default 50, at most 500.
	Limit int
}

// TaskPage is one page of tasks, newest first. Next is the cursor of the
// following page, "" when this is the last.
type TaskPage struct {
	Tasks []Task
	Next  string
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ListTasks returns tasks matching f, newest first, one page at a time.
// Pagination is keyset on the (time-sortable) id, so pages stay stable while
// new tasks arrive.
func (s *Store) ListTasks(ctx context.Context, f TaskFilter) (TaskPage, error) {
	limit := f.Limit
	switch {
	case limit <= 0:
		limit = 50
	case limit > 500:
		limit = 500
	}
	var where []string
	var args []any
	if len(f.States) > 0 {
		where = append(where, "state IN (?"+strings.Repeat(", ?", len(f.States)-1)+")")
		for _, st := range f.States {
			args = append(args, string(st))
		}
	}
	if f.Source != "" {
		where = append(where, "source = ?")
		args = append(args, string(f.Source))
	}
	if f.Requester != "" {
		where = append(where, "requester = ?")
		args = append(args, f.Requester)
	}
	if f.Workspace != "" {
		where = append(where, "workspace = ?")
		args = append(args, f.Workspace)
	}
	if f.Search != "" {
		// LIKE with an explicit escape character means the same on SQLite
		// and Postgres; LOWER on both sides makes it case-blind on both.
		where = append(where, `LOWER(prompt) LIKE ? ESCAPE '\'`)
		args = append(args, "%"+likeEscaper.Replace(strings.ToLower(f.Search))+"%")
	}
	if f.Cursor != "" {
		where = append(where, "id < ?")
		args = append(args, f.Cursor)
	}
	if f.After != "" {
		where = append(where, "id > ?")
		args = append(args, f.After)
	}
	q := "SELECT " + taskCols + " FROM tasks"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC LIMIT ?"
	args = append(args, limit+1)
	rs, err := s.db.query(ctx, q, args...)
	if err != nil {
		return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
	}
	defer rs.Close()
	var page TaskPage
	for rs.Next() {
		t, err := scanTask(rs)
		if err != nil {
			return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
		}
		page.Tasks = append(page.Tasks, t)
	}
	if err := rs.Err(); err != nil {
		return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
	}
	if len(page.Tasks) > limit {
		page.Tasks = page.Tasks[:limit]
		page.Next = page.Tasks[limit-1].ID
	}
	return page, nil
}
