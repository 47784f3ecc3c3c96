package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// PublishState is where handing a task's branch over to a forge stands.
type PublishState string

// Publish states. A record moves pending → pushed → done; it goes back to
// pending when the task is continued and ends with a new commit.
const (
	PublishPending PublishState = "pending" // to push
	PublishPushed  PublishState = "pushed"  // the commit is on the forge; the pull request may not be
	PublishDone    PublishState = "done"    // nothing left to do for this commit
	PublishFailed  PublishState = "failed"  // given up: Error says why
)

// ErrPublishBusy: another publisher holds the record's lease, or it has
// nothing left to do.
var ErrPublishBusy = errors.New("store: the publish record is held elsewhere or finished")

// PublishRecord is one task's row of the publish outbox.
type PublishRecord struct {
	TaskID    string
	Workspace string
	Branch    string
	Commit    string
	State     PublishState
	PRNumber  int
	PRURL     string
	PRState   string
	Error     string
	Attempts  int
	CreatedAt time.Time
	UpdatedAt time.Time
}

const publishCols = `task_id, workspace, branch, commit_sha, state, pr_number, pr_url, pr_state, error, attempts, created_at, updated_at`

func scanPublish(r row) (PublishRecord, error) {
	var (
		p                PublishRecord
		state            string
		created, updated int64
	)
	if err := r.Scan(&p.TaskID, &p.Workspace, &p.Branch, &p.Commit, &state, &p.PRNumber, &p.PRURL, &p.PRState,
		&p.Error, &p.Attempts, &created, &updated); err != nil {
		return PublishRecord{}, err
	}
	p.State, p.CreatedAt, p.UpdatedAt = PublishState(state), fromMicros(created), fromMicros(updated)
	return p, nil
}

// EnqueuePublish records that task's commit on branch is to be published:
// a new row is pending; a row for another commit (the task was continued)
// goes back to pending and keeps its pull request; a row for the same
// commit is left as it is, so enqueueing again after a crash changes
// nothing. It is written before the task's terminal state; after that
// state, only the rows of tasks that succeeded are driven (DuePublishes).
func (s *Store) EnqueuePublish(ctx context.Context, taskID, workspace, branch, commit string) (PublishRecord, error) {
	if taskID == "" || branch == "" || commit == "" {
		return PublishRecord{}, invalid("publish of task %q needs a branch and a commit", taskID)
	}
	now := micros(s.now())
	p, err := scanPublish(s.db.queryRow(ctx, `INSERT INTO publishes
			(task_id, workspace, branch, commit_sha, state, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (task_id) DO UPDATE SET
			state = CASE WHEN publishes.commit_sha = excluded.commit_sha THEN publishes.state ELSE excluded.state END,
			error = CASE WHEN publishes.commit_sha = excluded.commit_sha THEN publishes.error ELSE '' END,
			attempts = CASE WHEN publishes.commit_sha = excluded.commit_sha THEN publishes.attempts ELSE 0 END,
			commit_sha = excluded.commit_sha, branch = excluded.branch, updated_at = excluded.updated_at
		RETURNING `+publishCols,
		taskID, workspace, branch, commit, string(PublishPending), now, now))
	if err != nil {
		return PublishRecord{}, fmt.Errorf("store: enqueue publish of %s: %w", taskID, err)
	}
	return p, nil
}

// Publish returns task's publish record, or an error wrapping ErrNotFound.
func (s *Store) Publish(ctx context.Context, taskID string) (PublishRecord, error) {
	p, err := scanPublish(s.db.queryRow(ctx, `SELECT `+publishCols+` FROM publishes WHERE task_id = ?`, taskID))
	if isNoRows(err) {
		return PublishRecord{}, fmt.Errorf("store: publish of %s: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return PublishRecord{}, fmt.Errorf("store: read publish of %s: %w", taskID, err)
	}
	return p, nil
}

// PublishOfPR returns the publish record of workspace whose pull request
// is number, the newest task's when several are (a pull request reopened
// by a later task of the same branch cannot happen: branches are per
// task), or an error wrapping ErrNotFound. A review delivery names the
// pull request, not the task; this is how it finds the task it steers.
func (s *Store) PublishOfPR(ctx context.Context, workspace string, number int) (PublishRecord, error) {
	if workspace == "" || number <= 0 {
		return PublishRecord{}, fmt.Errorf("store: publish of pull request %d: %w", number, ErrNotFound)
	}
	p, err := scanPublish(s.db.queryRow(ctx, `SELECT `+publishCols+` FROM publishes
		WHERE workspace = ? AND pr_number = ? ORDER BY created_at DESC LIMIT 1`, workspace, number))
	if isNoRows(err) {
		return PublishRecord{}, fmt.Errorf("store: publish of %s pull request %d: %w", workspace, number, ErrNotFound)
	}
	if err != nil {
		return PublishRecord{}, fmt.Errorf("store: read publish of %s pull request %d: %w", workspace, number, err)
	}
	return p, nil
}

// ClaimPublish takes task's record for owner until lease has passed: only
// a record with work left (pending or pushed) whose task is ending (still
// running: the run publishes before it records its end), succeeded,
// waiting for CI on the pull request still to be opened, or stopped at
// its budget by "Stop and publish what exists" (the one way such a task
// has a record), and
// whose lease is free or owner's. Two nodes never drive one record at
// once, which is what keeps a second pull request from being opened while
// the first is on its way. It counts an attempt. Otherwise the error wraps
// ErrPublishBusy (or ErrNotFound).
func (s *Store) ClaimPublish(ctx context.Context, taskID, owner string, lease time.Duration) (PublishRecord, error) {
	now := s.now()
	p, err := scanPublish(s.db.queryRow(ctx, `UPDATE publishes SET lease_owner = ?, lease_until = ?,
			attempts = attempts + 1, updated_at = ?
		WHERE task_id = ? AND state IN (?, ?) AND (lease_until < ? OR lease_owner = ?)
			AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = publishes.task_id AND t.state IN (?, ?, ?, ?))
		RETURNING `+publishCols,
		owner, micros(now.Add(lease)), micros(now), taskID, string(PublishPending), string(PublishPushed),
		micros(now), owner, string(StateRunning), string(StateSucceeded), string(StateWaitingCI), string(StateBudgetExhausted)))
	if isNoRows(err) {
		if _, gerr := s.Publish(ctx, taskID); gerr != nil {
			return PublishRecord{}, gerr
		}
		return PublishRecord{}, fmt.Errorf("publish of %s: %w", taskID, ErrPublishBusy)
	}
	if err != nil {
		return PublishRecord{}, fmt.Errorf("store: claim publish of %s: %w", taskID, err)
	}
	return p, nil
}

// AdvancePublish stores p's state, pull request and error while owner
// holds the lease (else ErrPublishBusy). A PublishDone or PublishFailed
// record releases the lease; evs are appended to the task's log with the
// change, and result, when set, replaces the task's result (the pull
// request goes in it) — all in one transaction.
func (s *Store) AdvancePublish(ctx context.Context, p PublishRecord, owner string, result *Result, evs ...EventInput) error {
	events, err := s.newEvents(p.TaskID, evs)
	if err != nil {
		return err
	}
	var res any
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return fmt.Errorf("store: encode result: %w", err)
		}
		res = string(b)
	}
	final := p.State == PublishDone || p.State == PublishFailed
	return s.inTx(ctx, func(tx txn) error {
		n, err := tx.exec(ctx, `UPDATE publishes SET state = ?, pr_number = ?, pr_url = ?, pr_state = ?, error = ?,
				lease_until = CASE WHEN ? = 1 THEN 0 ELSE lease_until END, updated_at = ?
			WHERE task_id = ? AND lease_owner = ? AND commit_sha = ?`,
			string(p.State), p.PRNumber, p.PRURL, p.PRState, p.Error, boolInt(final), micros(s.now()),
			p.TaskID, owner, p.Commit)
		if err != nil {
			return fmt.Errorf("store: advance publish of %s: %w", p.TaskID, err)
		}
		if n == 0 {
			return fmt.Errorf("publish of %s: %w", p.TaskID, ErrPublishBusy)
		}
		if res != nil {
			if _, err := tx.exec(ctx, `UPDATE tasks SET result = ? WHERE id = ?`, res, p.TaskID); err != nil {
				return fmt.Errorf("store: record the pull request of %s: %w", p.TaskID, err)
			}
		}
		return appendEventsTx(ctx, tx, events)
	})
}

// DuePublishes lists up to limit tasks (oldest first) whose publish has
// work left, whose task succeeded (or waits for the CI of the pull request
// still to be opened, or stopped at its budget with "Stop and publish")
// and whose lease has passed: what a recovering publisher picks up.
func (s *Store) DuePublishes(ctx context.Context, limit int) ([]string, error) {
	if limit <= 0 {
		limit = 50
	}
	rs, err := s.db.query(ctx, `SELECT p.task_id FROM publishes p JOIN tasks t ON t.id = p.task_id
		WHERE p.state IN (?, ?) AND p.lease_until < ? AND t.state IN (?, ?, ?)
		ORDER BY p.updated_at LIMIT ?`,
		string(PublishPending), string(PublishPushed), micros(s.now()), string(StateSucceeded), string(StateWaitingCI),
		string(StateBudgetExhausted), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due publishes: %w", err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: due publishes: %w", err)
		}
		out = append(out, id)
	}
	return out, rs.Err()
}

// maxAwaitingCI bounds the tasks one commit wakes: a commit is normally
// one task's head.
const maxAwaitingCI = 20

// TasksAwaitingCI lists the tasks waiting for CI (StateWaitingCI) whose
// published commit is sha: the tasks a forge's check webhook for sha
// concerns. An empty sha lists none.
func (s *Store) TasksAwaitingCI(ctx context.Context, sha string) ([]string, error) {
	if sha == "" {
		return nil, nil
	}
	rs, err := s.db.query(ctx, `SELECT p.task_id FROM publishes p JOIN tasks t ON t.id = p.task_id
		WHERE t.state = ? AND p.commit_sha = ? LIMIT ?`, string(StateWaitingCI), sha, maxAwaitingCI)
	if err != nil {
		return nil, fmt.Errorf("store: tasks awaiting CI: %w", err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: tasks awaiting CI: %w", err)
		}
		out = append(out, id)
	}
	return out, rs.Err()
}

// ReleasePublish frees the lease owner holds on p's record and takes back
// the attempt its claim counted, leaving its state as it is: the record
// waits for something other than a retry (a person's approval), and the
// next Drive, on any node, may take it at once.
func (s *Store) ReleasePublish(ctx context.Context, p PublishRecord, owner string) error {
	_, err := s.db.exec(ctx, `UPDATE publishes SET lease_until = 0,
			attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, updated_at = ?
		WHERE task_id = ? AND lease_owner = ? AND commit_sha = ?`,
		micros(s.now()), p.TaskID, owner, p.Commit)
	if err != nil {
		return fmt.Errorf("store: release publish of %s: %w", p.TaskID, err)
	}
	return nil
}
