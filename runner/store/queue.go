package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Job is one claimed run of a task's job.
type Job struct {
	ID      int64  // River job id
	TaskID  string // the task to run
	Attempt int    // 1 for the first run; snoozes do not count
	// Task is the task as the job started, read with clearing its wake
	// (one statement on Postgres); nil when it was not read (SQLite) or
	// does not exist.
	Task *Task
}

// Handler runs task jobs. Return nil when the task reached an end (its state
// says which), Snooze to park it without holding a worker, or another error
// to have River retry it (up to Config.MaxAttempts, with backoff). A run may
// find its task already terminal (a wake can race with completion); it must
// then return nil without doing anything. A panic fails the attempt.
type Handler interface {
	RunTask(ctx context.Context, job Job) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job Job) error

// RunTask calls f.
func (f HandlerFunc) RunTask(ctx context.Context, job Job) error { return f(ctx, job) }

// Snooze returns the error a Handler returns to park its job for d: the job
// frees its worker and runs again after d, or earlier when Wake is called for
// its task. Use the approval deadline as d so an unanswered request still
// resumes the task.
func Snooze(d time.Duration) error { return river.JobSnooze(max(d, 0)) }

// Discard returns the error a Handler returns when its job must not be
// retried (the task is failed for good); err is recorded on the job.
func Discard(err error) error { return river.JobCancel(err) }

// QueueConfig configures the workers of one node.
type QueueConfig struct {
	// Handler runs the jobs; required.
	Handler Handler
	// MaxWorkers is how many tasks run at once on this node; default 4.
	MaxWorkers int
	// JobTimeout bounds one run of a task; default 2h (River's own default
	// of one minute would kill every agent run).
	JobTimeout time.Duration
	// PollInterval is how often the queue looks for runnable jobs when no
	// notification arrives (always, on SQLite); default 1s. On Postgres
	// every insert and every Wake notifies the nodes (LISTEN/NOTIFY), so
	// polling only catches what a lost notification missed.
	PollInterval time.Duration
	// WakeInterval is how often the queue sweeps for wakes that raced with
	// a running job (see Wake) after a worker freed; default 2s. Such a
	// wake is retried as soon as River records the snooze; the sweep is
	// the fallback. An idle queue sweeps 30 times less often.
	WakeInterval time.Duration
	// ID names this node's client in River's tables; default random.
	ID string
}

// Queue is a node's set of workers pulling task jobs. Build it with
// (*Store).NewQueue, then Start and eventually Stop it.
type Queue struct {
	s       *Store
	client  riverRunner
	handler Handler
	wakeInt time.Duration

	freed chan struct{} // a worker finished a job (capacity 1)

	mu      sync.Mutex
	cancel  context.CancelFunc
	swept   chan struct{}
	started bool
}

type taskWorker struct {
	river.WorkerDefaults[TaskArgs]
	q *Queue
}

// Timeout is none for a goal task's job (TaskArgs.Goal), the queue's
// JobTimeout for every other.
func (w *taskWorker) Timeout(job *river.Job[TaskArgs]) time.Duration {
	if job.Args.Goal {
		return -1
	}
	return 0
}

func (w *taskWorker) Work(ctx context.Context, job *river.Job[TaskArgs]) error {
	// A wake that arrives from here on is seen by this run (it reads fresh
	// state); one that arrived earlier is consumed by starting the run.
	task, err := w.q.s.clearWake(ctx, job.Args.TaskID)
	if err != nil {
		return err
	}
	err = w.q.handler.RunTask(ctx, Job{ID: job.ID, TaskID: job.Args.TaskID, Attempt: job.Attempt, Task: task})
	select { // see Queue.sweep
	case w.q.freed <- struct{}{}:
	default:
	}
	return err
}

// clearWake clears the wake of task id as its job starts. On Postgres
// the same statement reads the task for the job (nil when there is none),
// which the handler would read next anyway: the read sees the task as it
// was just before the clear, and a wake that lands later is seen by the
// run's own later reads, as before.
func (s *Store) clearWake(ctx context.Context, id string) (*Task, error) {
	const clear = "UPDATE tasks SET wake_pending = 0 WHERE id = ? AND wake_pending = 1"
	if s.dialect != dialectPostgres {
		if _, err := s.db.exec(ctx, clear, id); err != nil {
			return nil, fmt.Errorf("store: clear wake: %w", err)
		}
		return nil, nil
	}
	t, err := scanTask(s.db.queryRow(ctx, "WITH w AS ("+clear+") SELECT "+taskCols+" FROM tasks WHERE id = ?", id, id))
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: clear wake: %w", err)
	}
	return &t, nil
}

// NewQueue builds the workers of this node. Nothing runs until Start.
func (s *Store) NewQueue(cfg QueueConfig) (*Queue, error) {
	if cfg.Handler == nil {
		return nil, invalid("queue needs a handler")
	}
	cfg.MaxWorkers = cmp.Or(cfg.MaxWorkers, 4)
	cfg.JobTimeout = cmp.Or(cfg.JobTimeout, 2*time.Hour)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, time.Second)
	cfg.WakeInterval = cmp.Or(cfg.WakeInterval, 2*time.Second)
	switch {
	case cfg.MaxWorkers < 1 || cfg.MaxWorkers > river.QueueNumWorkersMax:
		return nil, invalid("max workers must be 1..%d (got %d)", river.QueueNumWorkersMax, cfg.MaxWorkers)
	case cfg.JobTimeout < 0:
		return nil, invalid("job timeout must be positive (got %s)", cfg.JobTimeout)
	case cfg.PollInterval < time.Millisecond:
		return nil, invalid("poll interval must be at least 1ms (got %s)", cfg.PollInterval)
	case cfg.WakeInterval < time.Millisecond:
		return nil, invalid("wake interval must be at least 1ms (got %s)", cfg.WakeInterval)
	}
	q := &Queue{s: s, handler: cfg.Handler, wakeInt: cfg.WakeInterval, freed: make(chan struct{}, 1)}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &taskWorker{q: q}); err != nil {
		return nil, fmt.Errorf("store: register worker: %w", err)
	}
	client, err := s.river.newClient(&river.Config{
		ID:                cfg.ID,
		Logger:            s.log,
		JobTimeout:        cfg.JobTimeout,
		MaxAttempts:       s.maxAtt,
		FetchPollInterval: cfg.PollInterval,
		FetchCooldown:     min(cfg.PollInterval, fetchCooldown),
		Queues:            map[string]river.QueueConfig{queueName: {MaxWorkers: cfg.MaxWorkers}},
		Workers:           workers,
	})
	if err != nil {
		return nil, fmt.Errorf("store: river client: %w", err)
	}
	q.client = client
	return q, nil
}

// Start begins fetching and running jobs, and the wake sweeper. ctx only
// bounds starting; stop with Stop.
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("store: queue already started")
	}
	snoozed, unsubscribe := q.client.Subscribe(river.EventKindJobSnoozed)
	if err := q.client.Start(ctx); err != nil {
		unsubscribe()
		return fmt.Errorf("store: start queue: %w", err)
	}
	sweepCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel, q.swept, q.started = cancel, make(chan struct{}), true
	go func() {
		defer unsubscribe()
		q.sweep(sweepCtx, snoozed)
	}()
	return nil
}

// Stop stops fetching new jobs and waits for running ones to finish. When
// ctx ends first, running jobs are cancelled (their ctx is done) and Stop
// waits for them to return; River retries them later. Stop returns when no
// goroutine of the queue is left. Stopping a queue that never started is a
// no-op.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started {
		return nil
	}
	q.started = false
	q.cancel()
	<-q.swept
	err := q.client.Stop(ctx)
	if err != nil && ctx.Err() != nil {
		err = q.client.StopAndCancel(context.WithoutCancel(ctx))
	}
	if err != nil {
		return fmt.Errorf("store: stop queue: %w", err)
	}
	return nil
}

// sweep retries pending wakes, and after a worker finished a job tells the
// nodes' queues that a job may be waiting. River fetches for a freed
// worker only when its last fetch came back full, and not at all for one
// freed while a fetch was under way: such a worker sat idle until the next
// poll (a second on Postgres) while jobs waited — up to 0.77 s measured
// between a task's end and the next start. The notice goes out one fetch
// cooldown later, so River's own fetch for the freed worker, when it makes
// one, comes first and is not pushed back by the cooldown; bursts of ends
// share one notice.
//
// A wake is left pending only when it raced with a running job, which
// frees a worker when it snoozes: a decision or a CI delivery right after
// the task parked. River records the snooze up to one completer flush after
// the job returns and then reports it (snoozed); the wake of that task is
// retried at once, so it costs that flush, not a sweep. The sweeps are the
// fallback: every WakeInterval after a worker freed, until no wake is
// pending and wakeGrace sweeps have passed; an idle queue sweeps every
// wakeIdle intervals, for a wake whose job ran on a node that died.
func (q *Queue) sweep(ctx context.Context, snoozed <-chan *river.Event) {
	defer close(q.swept)
	t := time.NewTimer(wakeIdle * q.wakeInt)
	defer t.Stop()
	fast := 0 // sweeps left at WakeInterval
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.freed:
			fast = wakeGrace
			t.Reset(q.wakeInt)
			select {
			case <-ctx.Done():
				return
			case <-time.After(fetchCooldown):
			}
			if err := q.s.notifyAvailable(ctx); err != nil && ctx.Err() == nil {
				q.s.log.Warn("store: telling the queues a worker is free failed; they find the next job at their next poll", "err", err)
			}
			continue
		case ev, ok := <-snoozed:
			if !ok {
				snoozed = nil // unsubscribed: the sweeps still retry
				continue
			}
			if err := q.s.retryWakeOf(ctx, ev.Job); err != nil && ctx.Err() == nil {
				q.s.log.Warn("store: retrying a wake after a snooze failed; the sweep retries it", "err", err)
			}
			continue
		case <-t.C:
		}
		pending, err := q.s.retryPendingWakes(ctx)
		if err != nil && ctx.Err() == nil {
			q.s.log.Warn("store: wake sweep failed", "err", err)
		}
		if pending > 0 || err != nil {
			fast = max(fast, 1)
		}
		if fast > 0 {
			fast--
			t.Reset(q.wakeInt)
		} else {
			t.Reset(wakeIdle * q.wakeInt)
		}
	}
}

const (
	// wakeGrace is how many sweeps follow a freed worker at least.
	wakeGrace = 3
	// wakeIdle is how many WakeIntervals an idle queue waits between sweeps.
	wakeIdle = 30
)

// Wake makes the task's snoozed job runnable now, from any node: it is what
// a decided approval or a steering reply calls. A wake that races with the
// job still running (about to snooze) is remembered and retried by every
// running Queue's sweeper, so it is never lost. Waking a task in a terminal
// state does nothing; an unknown task is an error wrapping ErrNotFound.
func (s *Store) Wake(ctx context.Context, taskID string) error {
	var jobID int64
	var state string
	err := s.db.queryRow(ctx, "UPDATE tasks SET wake_pending = 1 WHERE id = ? RETURNING job_id, state", taskID).Scan(&jobID, &state)
	if isNoRows(err) {
		return fmt.Errorf("store: wake %s: %w", taskID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: wake %s: %w", taskID, err)
	}
	if State(state).Terminal() {
		return nil
	}
	return s.retryJob(ctx, jobID)
}

// retryJob makes a parked job available now. Only parked jobs are touched:
// JobRetry would also revive completed, cancelled or discarded jobs.
func (s *Store) retryJob(ctx context.Context, jobID int64) error {
	job, err := s.river.jobGet(ctx, jobID)
	if errors.Is(err, river.ErrNotFound) {
		return nil // cleaned up after finishing
	}
	if err != nil {
		return fmt.Errorf("store: read job %d: %w", jobID, err)
	}
	switch job.State {
	case rivertype.JobStateScheduled, rivertype.JobStateRetryable:
		if _, err := s.river.jobRetry(ctx, jobID); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("store: retry job %d: %w", jobID, err)
		}
		return s.notifyAvailable(ctx)
	}
	return nil
}

// fetchCooldown is the least time between two fetches of one node: a
// notification is acted on this soon, and a burst of them costs one
// fetch per interval.
const fetchCooldown = 20 * time.Millisecond

// notifyAvailable tells the nodes' queues that a job became available, as
// River does for an insert: River sends nothing when a job is retried, so a
// woken task would otherwise wait for the next poll. The topic and payload
// are River's insert notification's (<schema>.river_insert on Postgres,
// {"queue": ...}); on SQLite the notification stays in process (see
// notifyHub).
func (s *Store) notifyAvailable(ctx context.Context) error {
	payload := `{"queue": "` + queueName + `"}`
	if hub := s.river.notifications(); hub != nil {
		hub.publish(insertTopic, []string{payload})
		return nil
	}
	if _, err := s.db.exec(ctx, "SELECT pg_notify(current_schema() || '.river_insert', ?)", payload); err != nil {
		return fmt.Errorf("store: notify the queue: %w", err)
	}
	return nil
}

// insertTopic is River's notification topic for available jobs.
const insertTopic = "river_insert"

// retryPendingWakes retries the jobs of live tasks with a wake recorded that
// no run has consumed yet, and reports how many there were.
func (s *Store) retryPendingWakes(ctx context.Context) (int, error) {
	rs, err := s.db.query(ctx, "SELECT job_id FROM tasks WHERE wake_pending = 1 AND state IN (?, ?, ?, ?)",
		string(StateQueued), string(StateRunning), string(StateWaitingApproval), string(StateWaitingCI))
	if err != nil {
		return 0, fmt.Errorf("store: read pending wakes: %w", err)
	}
	var ids []int64
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			rs.Close()
			return 0, fmt.Errorf("store: read pending wakes: %w", err)
		}
		ids = append(ids, id)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return 0, fmt.Errorf("store: read pending wakes: %w", err)
	}
	for _, id := range ids {
		if err := s.retryJob(ctx, id); err != nil {
			return len(ids), err
		}
	}
	return len(ids), nil
}

// retryWakeOf retries the parked job when its task has a wake pending: one
// that landed while the job was still running.
func (s *Store) retryWakeOf(ctx context.Context, job *rivertype.JobRow) error {
	var args TaskArgs
	if job == nil || json.Unmarshal(job.EncodedArgs, &args) != nil || args.TaskID == "" {
		return nil // not a task job
	}
	var pending int
	err := s.db.queryRow(ctx, "SELECT wake_pending FROM tasks WHERE id = ?", args.TaskID).Scan(&pending)
	if isNoRows(err) || (err == nil && pending == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: read the wake of %s: %w", args.TaskID, err)
	}
	return s.retryJob(ctx, job.ID)
}

var _ Handler = HandlerFunc(nil)

// JobRunning reports whether the River job of task id is recorded as
// running. A job whose process died stays so until River's rescuer takes
// it, an hour later; the runner requeues such tasks at start instead.
func (s *Store) JobRunning(ctx context.Context, id string) (bool, error) {
	t, err := s.Task(ctx, id)
	if err != nil {
		return false, err
	}
	job, err := s.river.jobGet(ctx, t.JobID)
	if errors.Is(err, river.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: read job of task %s: %w", id, err)
	}
	return job.State == rivertype.JobStateRunning, nil
}
