package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ScheduleState is the durable state of one [[schedules]] entry. The
// configuration says what a schedule is; this says what it has done.
type ScheduleState struct {
	Name string
	// Anchor is the last occurrence handled (fired, skipped or missed); the
	// next occurrence due is the first one after it.
	Anchor       time.Time
	Paused       bool
	PausedReason string // "" when paused by a person without a reason
	// Failures counts failed runs in a row; a success resets it.
	Failures int
	// LastRunAt is the occurrence of the last run (its start request for a
	// manual run); zero before the first.
	LastRunAt  time.Time
	LastTaskID string
	// LastOutcome is the end state of the last run once it was settled, ""
	// while it is still going or before the first run.
	LastOutcome State
	// Settled is false while the last run's end has not been counted.
	Settled       bool
	Skipped       int64 // occurrences skipped because the previous run was going
	LastSkippedAt time.Time
	Missed        int64 // occurrences dropped because they were late (catch_up none)
	LastMissedAt  time.Time
	// LastSuccessAt is when a run last settled as a success; zero before
	// the first.
	LastSuccessAt time.Time
	UpdatedAt     time.Time
}

const scheduleCols = `name, anchor, paused, paused_reason, failures, last_run_at, last_task_id, last_outcome,
	settled, skipped, last_skipped_at, missed, last_missed_at, last_success_at, updated_at`

func scanSchedule(r row) (ScheduleState, error) {
	var (
		st                   ScheduleState
		anchor, updated      int64
		paused, settled      int
		lastRun, lastSkipped sql.NullInt64
		lastMissed           sql.NullInt64
		lastSuccess          sql.NullInt64
		outcome              string
	)
	err := r.Scan(&st.Name, &anchor, &paused, &st.PausedReason, &st.Failures, &lastRun, &st.LastTaskID,
		&outcome, &settled, &st.Skipped, &lastSkipped, &st.Missed, &lastMissed, &lastSuccess, &updated)
	if err != nil {
		return ScheduleState{}, err
	}
	st.Anchor, st.UpdatedAt = fromMicros(anchor), fromMicros(updated)
	st.Paused, st.Settled = paused != 0, settled != 0
	st.LastRunAt, st.LastSkippedAt = fromNullMicros(lastRun), fromNullMicros(lastSkipped)
	st.LastMissedAt, st.LastSuccessAt = fromNullMicros(lastMissed), fromNullMicros(lastSuccess)
	st.LastOutcome = State(outcome)
	return st, nil
}

// EnsureSchedule creates the state of schedule name with anchor (normally
// now, so a new schedule does not fire for the past) unless it exists, and
// returns the stored state. Existing state, a pause included, is kept.
func (s *Store) EnsureSchedule(ctx context.Context, name string, anchor time.Time) (ScheduleState, error) {
	if name == "" {
		return ScheduleState{}, invalid("schedule name is empty")
	}
	if _, err := s.db.exec(ctx, `INSERT INTO schedules (name, anchor, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, micros(anchor), micros(s.now())); err != nil {
		return ScheduleState{}, fmt.Errorf("store: create schedule %s: %w", name, err)
	}
	return s.Schedule(ctx, name)
}

// Schedule returns the state of schedule name, or an error wrapping
// ErrNotFound.
func (s *Store) Schedule(ctx context.Context, name string) (ScheduleState, error) {
	st, err := scanSchedule(s.db.queryRow(ctx, "SELECT "+scheduleCols+" FROM schedules WHERE name = ?", name))
	if isNoRows(err) {
		return ScheduleState{}, fmt.Errorf("store: schedule %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return ScheduleState{}, fmt.Errorf("store: read schedule %s: %w", name, err)
	}
	return st, nil
}

// Schedules returns the state of every schedule ever created, by name. A
// schedule removed from the configuration keeps its row (and its pause), so
// putting it back resumes where it was.
func (s *Store) Schedules(ctx context.Context) ([]ScheduleState, error) {
	rs, err := s.db.query(ctx, "SELECT "+scheduleCols+" FROM schedules ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("store: list schedules: %w", err)
	}
	defer rs.Close()
	var out []ScheduleState
	for rs.Next() {
		st, err := scanSchedule(rs)
		if err != nil {
			return nil, fmt.Errorf("store: list schedules: %w", err)
		}
		out = append(out, st)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list schedules: %w", err)
	}
	return out, nil
}

// Fire is one run of a schedule handed to FireSchedule.
type Fire struct {
	Name string
	// Manual is a run somebody asked for: it ignores Anchor, Occurrence and
	// the pause, and RunAt is its time.
	Manual bool
	// Anchor is the state's anchor as the caller read it; the fire happens
	// only if it is still the same and the schedule is not paused.
	Anchor time.Time
	// Occurrence is the tick being fired; it becomes the new anchor.
	Occurrence time.Time
	RunAt      time.Time // the run's time: Occurrence, or now for a manual run
	Task       NewTask
	// DedupeKey identifies the occurrence ("schedule:<name>:<time>"): even
	// a caller that misread the anchor cannot create its task twice.
	DedupeKey string
}

// errLostRace rolls back a fire whose anchor moved meanwhile.
var errLostRace = errors.New("store: schedule anchor moved")

// FireSchedule is the decision to fire and the intake in ONE transaction:
// it moves the schedule's anchor from f.Anchor to f.Occurrence (a
// compare-and-swap that fails if another node got there first or the
// schedule was paused), creates the task, its dedupe key and its job, and
// records the task as the schedule's last run. fired is false, with nothing
// written, when the compare-and-swap failed, and also when the dedupe key
// named an existing task (then only the anchor moved). For a manual fire
// only the last run is recorded.
func (s *Store) FireSchedule(ctx context.Context, f Fire) (task Task, fired bool, err error) {
	if err := f.Task.validate(); err != nil {
		return Task{}, false, err
	}
	err = s.inTx(ctx, func(tx txn) error {
		// A dedupe key seen before (the occurrence's task exists) still
		// moves the anchor past it, but is not a new fire.
		task, fired, err = s.createTaskTx(ctx, tx, f.Task, f.DedupeKey)
		if err != nil {
			return err
		}
		now := micros(s.now())
		var n int64
		switch {
		case !fired && !f.Manual:
			n, err = tx.exec(ctx, `UPDATE schedules SET anchor = ?, updated_at = ?
				WHERE name = ? AND anchor = ? AND paused = 0`, micros(f.Occurrence), now, f.Name, micros(f.Anchor))
		case f.Manual:
			n, err = tx.exec(ctx, `UPDATE schedules SET last_run_at = ?, last_task_id = ?, last_outcome = '',
				settled = 0, updated_at = ? WHERE name = ?`, micros(f.RunAt), task.ID, now, f.Name)
		default:
			n, err = tx.exec(ctx, `UPDATE schedules SET anchor = ?, last_run_at = ?, last_task_id = ?,
				last_outcome = '', settled = 0, updated_at = ? WHERE name = ? AND anchor = ? AND paused = 0`,
				micros(f.Occurrence), micros(f.RunAt), task.ID, now, f.Name, micros(f.Anchor))
		}
		if err != nil {
			return fmt.Errorf("store: record schedule %s run: %w", f.Name, err)
		}
		if n == 0 {
			return errLostRace
		}
		return nil
	})
	if errors.Is(err, errLostRace) {
		if _, gerr := s.Schedule(ctx, f.Name); gerr != nil {
			return Task{}, false, gerr // a manual fire of an unknown schedule
		}
		return Task{}, false, nil
	}
	if err != nil || !fired {
		return Task{}, false, err
	}
	return task, true, nil
}

// Pass says why AdvanceSchedule moves an anchor without a run.
type Pass int

// The reasons an occurrence passes without a run.
const (
	PassQuiet   Pass = iota // not counted (a disabled schedule)
	PassSkipped             // the previous run was still going (overlap skip)
	PassMissed              // it was late after downtime (catch_up none)
)

// AdvanceSchedule moves the anchor of schedule name from anchor to
// occurrence without a run, counting why; false when another node moved it
// first.
func (s *Store) AdvanceSchedule(ctx context.Context, name string, anchor, occurrence time.Time, why Pass) (bool, error) {
	set := ""
	switch why {
	case PassSkipped:
		set = ", skipped = skipped + 1, last_skipped_at = ?"
	case PassMissed:
		set = ", missed = missed + 1, last_missed_at = ?"
	}
	args := []any{micros(occurrence), micros(s.now())}
	if why == PassSkipped || why == PassMissed {
		args = append(args, micros(occurrence))
	}
	args = append(args, name, micros(anchor))
	n, err := s.db.exec(ctx, `UPDATE schedules SET anchor = ?, updated_at = ?`+set+
		` WHERE name = ? AND anchor = ?`, args...)
	if err != nil {
		return false, fmt.Errorf("store: advance schedule %s: %w", name, err)
	}
	return n == 1, nil
}

// Verdict is how a finished run counts towards a schedule's failures.
type Verdict int

// The verdicts.
const (
	VerdictNeutral Verdict = iota // neither resets nor counts (cancelled, interrupted)
	VerdictSuccess                // resets the count
	VerdictFailure                // counts one more
)

// SettleSchedule records that the last run of schedule name, taskID, ended
// in outcome, and counts it. When the count of failures in a row reaches
// maxFailures (> 0) the schedule is paused with reason. settled is false
// when the run was settled already (by another node) or is no longer the
// last; autoPaused is true only for the call that paused it.
func (s *Store) SettleSchedule(ctx context.Context, name, taskID string, outcome State, v Verdict,
	maxFailures int, reason string) (settled, autoPaused bool, err error) {
	err = s.inTx(ctx, func(tx txn) error {
		var failures, paused int
		now, success := micros(s.now()), boolInt(v == VerdictSuccess)
		err := tx.queryRow(ctx, `UPDATE schedules SET settled = 1, last_outcome = ?, updated_at = ?,
				failures = CASE WHEN ? = 1 THEN 0 WHEN ? = 1 THEN failures + 1 ELSE failures END,
				last_success_at = CASE WHEN ? = 1 THEN ? ELSE last_success_at END
			WHERE name = ? AND last_task_id = ? AND settled = 0 RETURNING failures, paused`,
			string(outcome), now, success, boolInt(v == VerdictFailure), success, now, name, taskID).Scan(&failures, &paused)
		if isNoRows(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store: settle schedule %s: %w", name, err)
		}
		settled = true
		if v != VerdictFailure || maxFailures <= 0 || failures < maxFailures || paused != 0 {
			return nil
		}
		if _, err := tx.exec(ctx, `UPDATE schedules SET paused = 1, paused_reason = ? WHERE name = ?`, reason, name); err != nil {
			return fmt.Errorf("store: pause schedule %s: %w", name, err)
		}
		autoPaused = true
		return nil
	})
	return settled, autoPaused, err
}

// PauseSchedule pauses schedule name; reason may be "". Pausing a paused
// schedule keeps its first reason.
func (s *Store) PauseSchedule(ctx context.Context, name, reason string) (ScheduleState, error) {
	return s.updateSchedule(ctx, name, `paused = 1,
		paused_reason = CASE WHEN paused = 1 THEN paused_reason ELSE ? END`, reason)
}

// ResumeSchedule unpauses schedule name, clears its failure count and moves
// its anchor to anchor (now): occurrences that passed while it was paused
// are not caught up.
func (s *Store) ResumeSchedule(ctx context.Context, name string, anchor time.Time) (ScheduleState, error) {
	return s.updateSchedule(ctx, name, `anchor = CASE WHEN paused = 1 THEN ? ELSE anchor END,
		paused = 0, paused_reason = '', failures = 0`, micros(anchor))
}

func (s *Store) updateSchedule(ctx context.Context, name, set string, args ...any) (ScheduleState, error) {
	args = append(args, micros(s.now()), name)
	st, err := scanSchedule(s.db.queryRow(ctx, "UPDATE schedules SET "+set+", updated_at = ? WHERE name = ? RETURNING "+scheduleCols, args...))
	if isNoRows(err) {
		return ScheduleState{}, fmt.Errorf("store: schedule %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return ScheduleState{}, fmt.Errorf("store: update schedule %s: %w", name, err)
	}
	return st, nil
}
