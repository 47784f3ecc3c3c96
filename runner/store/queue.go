package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	// IdleAfter is how long a queue runs no job and has none due before
	// it stops River until one is (see Queue.doze); default 30s, negative
	// never.
	IdleAfter time.Duration
	// Alone reports whether this node is the only one alive (from its
	// heartbeat). A Postgres queue dozes only while it is: other nodes'
	// jobs and leadership need River's notifications and elections.
	// Nil: a Postgres queue never dozes.
	Alone func() bool
}

// Queue is a node's set of workers pulling task jobs. Build it with
// (*Store).NewQueue, then Start and eventually Stop it.
type Queue struct {
	s       *Store
	client  riverRunner
	handler Handler
	wakeInt time.Duration

	freed chan struct{} // a worker finished a job (capacity 1)

	// Dozing: see doze.
	idleAfter time.Duration
	poll      time.Duration
	id        string
	alone     func() bool
	running   atomic.Int64      // jobs in Work
	lastDone  atomic.Int64      // when a job last returned, Unix nanoseconds
	snoozed   chan *river.Event // River's snooze events, across restarts
	dozing    atomic.Bool
	// forwarding runs while River's client does (see startClient).
	forwarding sync.WaitGroup

	mu      sync.Mutex
	cancel  context.CancelFunc
	swept   chan struct{}
	dozed   chan struct{} // closed when doze returned (nil: no doze)
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
	w.q.running.Add(1)
	defer func() {
		w.q.lastDone.Store(time.Now().UnixNano())
		w.q.running.Add(-1)
	}()
	// A wake that arrives from here on is seen by this run (it reads fresh
	// state); one that arrived earlier is consumed by starting the run.
	w.q.s.parked.Delete(job.Args.TaskID) // a job of the task runs: none is parked
	task, err := w.q.s.clearWake(ctx, job.Args.TaskID)
	if err != nil {
		return err
	}
	err = w.q.handler.RunTask(ctx, Job{ID: job.ID, TaskID: job.Args.TaskID, Attempt: job.Attempt, Task: task})
	if snoozed(err) {
		w.q.s.park(ctx, job.Args.TaskID, job.ID) // see park.go
	}
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
	q := &Queue{s: s, handler: cfg.Handler, wakeInt: cfg.WakeInterval, freed: make(chan struct{}, 1),
		idleAfter: cmp.Or(cfg.IdleAfter, defaultIdleAfter), poll: cfg.PollInterval, id: cfg.ID, alone: cfg.Alone,
		snoozed: make(chan *river.Event, 16)}
	if s.river.notifications() == nil && cfg.Alone == nil {
		q.idleAfter = -1
	}
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
	if err := q.startClient(ctx); err != nil {
		return fmt.Errorf("store: start queue: %w", err)
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel, q.swept, q.started = cancel, make(chan struct{}), true
	go q.sweep(bg)
	q.dozed = nil
	if q.idleAfter > 0 {
		q.dozed = make(chan struct{})
		go q.doze(bg)
	}
	return nil
}

// startClient starts River's client and forwards its snooze events to
// q.snoozed until the client stops.
func (q *Queue) startClient(ctx context.Context) error {
	events, unsubscribe := q.client.Subscribe(river.EventKindJobSnoozed)
	if err := q.client.Start(ctx); err != nil {
		unsubscribe()
		return err
	}
	q.forwarding.Go(func() {
		defer unsubscribe()
		for ev := range events { // closed when the client stops
			select {
			case q.snoozed <- ev:
			default: // the sweeps still retry its wake
			}
		}
	})
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
	if q.dozed != nil {
		<-q.dozed
	}
	q.dozing.Store(false)
	q.s.dozer.CompareAndSwap(q, nil)
	err := q.client.Stop(ctx)
	if err != nil && ctx.Err() != nil {
		err = q.client.StopAndCancel(context.WithoutCancel(ctx))
	}
	if err != nil {
		return fmt.Errorf("store: stop queue: %w", err)
	}
	q.forwarding.Wait()
	return nil
}

// defaultIdleAfter is QueueConfig.IdleAfter's default.
const defaultIdleAfter = 30 * time.Second

// doze stops River on an idle node and starts it again when a job is
// due. River's completer wakes every 50 ms whether or not a job ran (20
// wake-ups a second, about 0.4 % of a core on a loaded machine, most of
// what an idle node spent), and River offers no setting for it. A queue
// that has run no job for IdleAfter and has none available or due within
// IdleAfter stops its client. While it dozes, it starts the client again
// at once when this process makes a job available (an insert, a Wake:
// told through the notification hub on SQLite, through Store.jobs on
// Postgres), when the earliest scheduled job falls due (a snooze ends, a
// retry's backoff), and within the poll interval when a job that another
// process inserted waits. On Postgres it dozes only while the heartbeat
// finds no other node alive (QueueConfig.Alone) and wakes when one
// comes. A dozing node leads while no River client does (see
// Store.Leader): its maintenance (approval expiry, schedules) goes on.
func (q *Queue) doze(ctx context.Context) {
	defer close(q.dozed)
	var wake <-chan struct{}
	var unsubscribe func()
	if hub := q.s.river.notifications(); hub != nil {
		wake, unsubscribe = hub.subscribeAll()
	} else {
		wake, unsubscribe = q.s.jobs.subscribe("")
	}
	defer unsubscribe()
	t := time.NewTimer(q.idleAfter)
	defer t.Stop()
	for {
		// Awake: look again IdleAfter after the last sign of work.
		select {
		case <-ctx.Done():
			return
		case <-wake:
			t.Reset(q.idleAfter)
			continue
		case <-t.C:
		}
		if q.running.Load() > 0 {
			t.Reset(q.idleAfter)
			continue
		}
		if since := time.Since(time.Unix(0, q.lastDone.Load())); since < q.idleAfter {
			t.Reset(q.idleAfter - since)
			continue
		}
		if q.alone != nil && !q.alone() {
			t.Reset(q.idleAfter)
			continue
		}
		due, ok, err := q.s.nextJobDue(ctx)
		if err != nil || (ok && due < q.idleAfter) {
			t.Reset(q.idleAfter)
			continue
		}
		if err := q.client.Stop(ctx); err != nil {
			if ctx.Err() == nil {
				q.s.log.Warn("store: stopping the idle queue failed; it stays awake", "err", err)
			}
			t.Reset(q.idleAfter)
			continue
		}
		q.dozing.Store(true)
		q.s.dozer.CompareAndSwap(nil, q)
		// Stopping told the hub (River resigned its leadership): that is
		// no job. One that arrived meanwhile is found by sleep's first
		// look at the jobs.
		select {
		case <-wake:
		default:
		}
		if !q.sleep(ctx, wake) {
			return
		}
		q.s.dozer.CompareAndSwap(q, nil)
		q.dozing.Store(false)
		if err := q.startClient(context.WithoutCancel(ctx)); err != nil {
			// Not running is not idling: keep trying at the poll interval.
			q.s.log.Error("store: starting the queue again failed", "err", err)
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(q.poll):
				}
				if err := q.startClient(context.WithoutCancel(ctx)); err == nil {
					break
				}
			}
		}
		t.Reset(q.idleAfter)
	}
}

// sleep waits while the queue dozes; it returns false when ctx ended and
// true when a job is due.
func (q *Queue) sleep(ctx context.Context, wake <-chan struct{}) bool {
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for {
		if q.alone != nil && !q.alone() {
			return true // another node came: River elects and listens again
		}
		next := min(q.poll, q.idleAfter) // looks at least as often as it would doze

		due, ok, err := q.s.nextJobDue(ctx)
		if err == nil && ok {
			if due <= 0 {
				return true
			}
			next = min(next, due)
		}
		t.Reset(next)
		select {
		case <-ctx.Done():
			return false
		case <-wake:
			return true
		case <-t.C:
		}
	}
}

// Dozing reports whether the queue stopped River while idle (see doze).
func (q *Queue) Dozing() bool { return q.dozing.Load() }

// nextJobDue is how long until the earliest job that is neither finished
// nor running may run (0 or less: it may now); ok is false when there is
// none. River stamps its jobs with its own clock, so this compares with
// the database's.
func (s *Store) nextJobDue(ctx context.Context) (due time.Duration, ok bool, err error) {
	var secs sql.NullFloat64
	wait := "(julianday(min(scheduled_at)) - julianday('now')) * 86400.0"
	if s.dialect == dialectPostgres {
		wait = "EXTRACT(EPOCH FROM min(scheduled_at) - now())::float8"
	}
	err = s.db.queryRow(ctx, "SELECT "+wait+` FROM river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'pending')`).Scan(&secs)
	if err != nil {
		return 0, false, fmt.Errorf("store: next job due: %w", err)
	}
	if !secs.Valid {
		return 0, false, nil
	}
	return time.Duration(secs.Float64 * float64(time.Second)), true, nil
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
// the task parked. In this process such a wake supersedes the parked job
// at once (park.go); from another process it waits for River to record
// the snooze (up to one completer flush after the job returns) and report
// it (snoozed), and the wake of that task is retried at once, so it costs
// that flush, not a sweep. The sweeps are the
// fallback: every WakeInterval after a worker freed, until no wake is
// pending and wakeGrace sweeps have passed; an idle queue sweeps every
// wakeIdle intervals, for a wake whose job ran on a node that died.
func (q *Queue) sweep(ctx context.Context) {
	snoozed := q.snoozed
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
		case ev := <-snoozed:
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
// running Queue's sweeper, so it is never lost; one that finds the job
// snoozed by this process but not yet recorded by River gives the task a
// new job at once (park.go). Waking a task in a terminal
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
	if ok, err := s.wakeParked(ctx, taskID, jobID); ok || err != nil {
		return err
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
	s.jobs.signal("") // see Queue.doze
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
	s.unpark(args.TaskID, job.ID) // River holds it as parked now: a retry wakes it
	var pending int
	// A job superseded meanwhile (park.go) is no longer the task's: not
	// worth running just to find that out.
	err := s.db.queryRow(ctx, "SELECT wake_pending FROM tasks WHERE id = ? AND job_id = ?", args.TaskID, job.ID).Scan(&pending)
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
