package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"reasonix/agent"
)

// Step is what one step of a run writes, together: messages appended to
// the conversation, journal entries finished (the calls the messages
// answer), at most one journal entry started (the call about to run) and
// the step's events. WriteStep commits them in one transaction — on
// Postgres one statement — where each used to take its own.
type Step struct {
	// After is how many messages the conversation has: Messages become
	// numbers After+1, After+2, …. If the conversation has another
	// length (another writer got in) nothing is written and WriteStep
	// returns an error wrapping ErrConversationMoved. -1 appends to
	// whatever the conversation has.
	After    int64
	Messages []agent.Message
	Finish   []CallOutcome
	Start    *JournalCall
	Events   []EventInput
}

// JournalCall is a call about to run, as JournalStart records it.
type JournalCall struct {
	CallID, Tool, ArgsHash, Args string
}

// StepResult is what WriteStep did: Seq is the conversation's length
// after it, Missed the call ids of Finish that found no unfinished entry
// (they change nothing), and Started whether Start was recorded (false:
// the call was started before, see ErrAlreadyStarted).
//
// Cancel and Inbox are the task's control state as the step found it
// (see ControlState), read in the same statement: a run that writes a
// step need not poll for them separately.
type StepResult struct {
	Seq     int64
	Missed  []string
	Started bool
	Cancel  bool
	Inbox   bool
}

// ErrConversationMoved is returned by WriteStep when the conversation does
// not have the length the step was written for.
var ErrConversationMoved = errors.New("store: the conversation moved under the writer")

// WriteStep writes step for task taskID, all or none (see Step). An
// unknown task is an error wrapping ErrNotFound.
func (s *Store) WriteStep(ctx context.Context, taskID string, step Step) (StepResult, error) {
	if st := step.Start; st != nil && (st.CallID == "" || st.Tool == "") {
		return StepResult{}, invalid("journal entry needs a call id and a tool")
	}
	bodies := make([]string, len(step.Messages))
	for i, m := range step.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			return StepResult{}, fmt.Errorf("store: encode message: %w", err)
		}
		bodies[i] = string(b)
	}
	evs, err := s.newEvents(taskID, step.Events)
	if err != nil {
		return StepResult{}, err
	}
	now := micros(s.now())
	var res StepResult
	if s.dialect == dialectPostgres {
		res, err = s.writeStepStatement(ctx, taskID, step, bodies, evs, now)
	} else {
		err = s.inTx(ctx, func(tx txn) error {
			var err error
			res, err = writeStepTx(ctx, tx, taskID, step, bodies, evs, now)
			return err
		})
	}
	if errors.Is(err, errNoStep) {
		if _, err := getTask(ctx, s.db, taskID); err != nil {
			return StepResult{}, err
		}
		return StepResult{}, fmt.Errorf("store: write step of task %s: %w", taskID, ErrConversationMoved)
	}
	if err != nil {
		return StepResult{}, fmt.Errorf("store: write step of task %s: %w", taskID, err)
	}
	return res, nil
}

// errNoStep: the step's base row was not found (no such task, or the
// conversation moved); WriteStep tells which.
var errNoStep = errors.New("no step base")

// stepBaseSQL selects the task's conversation length as base, only when
// it is the writer's, with its control state (args: task id, task id,
// after, after).
const stepBaseSQL = `SELECT tasks.id, m.base, tasks.cancel_requested AS cancel,
	CASE WHEN EXISTS (SELECT 1 FROM task_inbox i WHERE i.task_id = tasks.id AND i.consumed_at IS NULL) THEN 1 ELSE 0 END AS inbox
	FROM tasks,
	(SELECT COALESCE(max(seq), 0) AS base FROM task_messages WHERE task_id = ?) AS m
	WHERE tasks.id = ? AND (? = -1 OR m.base = ?)`

// writeStepStatement is WriteStep in one Postgres statement: every write
// is a data-modifying CTE that reads the base row t, so a task that does
// not exist, or a conversation that moved, writes nothing.
func (s *Store) writeStepStatement(ctx context.Context, taskID string, step Step, bodies []string, evs []Event, now int64) (StepResult, error) {
	ctes := []string{"t AS (" + stepBaseSQL + ")"}
	args := []any{taskID, taskID, step.After, step.After}
	if len(bodies) > 0 {
		rows := make([]string, len(bodies))
		args = append(args, now)
		for i, b := range bodies {
			rows[i] = fmt.Sprintf("(%d, ?::text)", i+1)
			args = append(args, b)
		}
		ctes = append(ctes, `m AS (INSERT INTO task_messages (task_id, seq, body, created_at)
			SELECT t.id, t.base + v.i, v.b, ?::bigint FROM t, (VALUES `+strings.Join(rows, ", ")+`) AS v (i, b))`)
	}
	finished := "''"
	if len(step.Finish) > 0 {
		rows := make([]string, len(step.Finish))
		args = append(args, now)
		for i, o := range step.Finish {
			rows[i] = "(?::text, ?::text, ?::int)"
			args = append(args, o.CallID, o.Result, boolInt(o.IsError))
		}
		ctes = append(ctes, `f AS (UPDATE tool_journal j SET finished_at = ?, result = v.r, is_error = v.e
			FROM t, (VALUES `+strings.Join(rows, ", ")+`) AS v (c, r, e)
			WHERE j.task_id = t.id AND j.call_id = v.c AND j.finished_at IS NULL RETURNING j.call_id)`)
		finished = "(SELECT coalesce(string_agg(call_id, E'\\n'), '') FROM f)"
	}
	started := "0"
	if st := step.Start; st != nil {
		ctes = append(ctes, `s AS (INSERT INTO tool_journal (task_id, call_id, tool, args_hash, args, started_at)
			SELECT t.id, ?::text, ?::text, ?::text, ?::text, ?::bigint FROM t ON CONFLICT (task_id, call_id) DO NOTHING RETURNING 1)`)
		args = append(args, st.CallID, st.Tool, st.ArgsHash, st.Args, now)
		started = "(SELECT count(*) FROM s)"
	}
	if len(evs) > 0 {
		n := int64(len(evs))
		values, vargs := eventValues(evs)
		ctes = append(ctes, `c AS (INSERT INTO task_counters (task_id, event_seq)
				SELECT tasks.id, tasks.event_seq + ? FROM tasks, t WHERE tasks.id = t.id
				ON CONFLICT (task_id) DO UPDATE SET event_seq = task_counters.event_seq + ?
				RETURNING event_seq AS n)`,
			`e AS (INSERT INTO task_events (task_id, seq, type, payload, created_at)
				SELECT t.id, c.n - ? + v.i, v.t, v.p, v.at FROM t, c, `+values+`)`)
		args = append(append(args, n, n, n), vargs...)
	}
	var res StepResult
	var missedOf string
	var nStarted, cancel, inbox int64
	err := s.db.queryRow(ctx, "WITH "+strings.Join(ctes, ",\n")+
		"\nSELECT t.base, "+finished+", "+started+", t.cancel, t.inbox FROM t", args...).Scan(&res.Seq, &missedOf, &nStarted, &cancel, &inbox)
	if isNoRows(err) {
		return StepResult{}, errNoStep
	}
	if err != nil {
		return StepResult{}, err
	}
	res.Seq += int64(len(bodies))
	res.Started = nStarted == 1
	res.Cancel, res.Inbox = cancel != 0, inbox != 0
	res.Missed = missedCalls(step.Finish, strings.Split(missedOf, "\n"))
	return res, nil
}

// missedCalls is the call ids of done that are not in finished.
func missedCalls(done []CallOutcome, finished []string) []string {
	var missed []string
	for _, o := range done {
		found := false
		for _, f := range finished {
			found = found || f == o.CallID
		}
		if !found {
			missed = append(missed, o.CallID)
		}
	}
	return missed
}

// writeStepTx is WriteStep statement by statement, in tx (SQLite).
func writeStepTx(ctx context.Context, tx txn, taskID string, step Step, bodies []string, evs []Event, now int64) (StepResult, error) {
	var res StepResult
	var id string
	var cancel, inbox int64
	if err := tx.queryRow(ctx, stepBaseSQL, taskID, taskID, step.After, step.After).Scan(&id, &res.Seq, &cancel, &inbox); err != nil {
		if isNoRows(err) {
			return res, errNoStep
		}
		return res, err
	}
	res.Cancel, res.Inbox = cancel != 0, inbox != 0
	for _, b := range bodies {
		res.Seq++
		if _, err := tx.exec(ctx, "INSERT INTO task_messages (task_id, seq, body, created_at) VALUES (?, ?, ?, ?)",
			taskID, res.Seq, b, now); err != nil {
			return res, fmt.Errorf("append message: %w", err)
		}
	}
	for _, o := range step.Finish {
		n, err := tx.exec(ctx, journalFinishSQL, now, o.Result, boolInt(o.IsError), taskID, o.CallID)
		if err != nil {
			return res, fmt.Errorf("journal finish %s: %w", o.CallID, err)
		}
		if n == 0 {
			res.Missed = append(res.Missed, o.CallID)
		}
	}
	if st := step.Start; st != nil {
		n, err := tx.exec(ctx, `INSERT INTO tool_journal (task_id, call_id, tool, args_hash, args, started_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task_id, call_id) DO NOTHING`,
			taskID, st.CallID, st.Tool, st.ArgsHash, st.Args, now)
		if err != nil {
			return res, fmt.Errorf("journal start %s: %w", st.CallID, err)
		}
		res.Started = n == 1
	}
	if err := appendEventsTx(ctx, tx, evs); err != nil {
		return res, err
	}
	return res, nil
}
