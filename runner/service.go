package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"reasonix/config"
	"reasonix/internal/redact"
	"reasonix/policy"
	"reasonix/runner/internal/cluster"
	"reasonix/runner/internal/maintenance"
	"reasonix/runner/internal/publish"
	"reasonix/runner/internal/taskrun"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// ProviderFunc resolves a model reference ("" = the configured default) to
// the model a task's session uses (see session.ResolveModel).
type ProviderFunc func(modelRef string) (session.Model, error)

// Config assembles a Service. Store and Providers are required.
type Config struct {
	// Store is the opened, migrated store; the Service does not close it.
	Store *store.Store
	// Settings is the loaded configuration; nil means config.Default().
	// Load it with SkipMCPJSON for the service: MCP servers declared by a
	// workspace's own files are never started.
	Settings *config.Config
	// Providers builds a task's model provider; required.
	Providers ProviderFunc
	// Workspaces prepares task directories (see NewWorkspaces); nil gives
	// every task a scratch directory under ScratchDir.
	Workspaces Workspaces
	// ScratchDir holds scratch directories when Workspaces is nil; default
	// <data dir>/scratch, or a directory under os.TempDir() when the
	// configuration has no data dir.
	ScratchDir string
	// Node identifies this process among the nodes sharing the store (see
	// NodeID); default a random id, which makes crash recovery rely on
	// heartbeats alone.
	Node string
	// Version and Addr describe this node in `reasonix nodes`: the
	// binary's version and the address its API listens on; both optional.
	// An empty Version is the main module's version from the build info
	// (`go install ...@v1.2.3`), else "dev", so a node never shows none.
	Version string
	Addr    string
	// Logger receives the service's logs; nil uses slog.Default().
	Logger *slog.Logger
	// Now is the clock for approval deadlines, heartbeats and durations;
	// nil uses time.Now. Give the store the same clock.
	Now func() time.Time
	// AllowSelfApproval lets a task's requester decide approvals of their
	// own task; default false.
	AllowSelfApproval bool
	// ShellEnv is the environment of model-written shell commands; nil
	// means session.ShellEnv(Settings), an allowlist.
	ShellEnv []string
	// SystemPrompt overrides [agent] system_prompt and the default.
	SystemPrompt string
	// Secrets are secret values the service knows beyond those of its
	// configuration (session.Secrets); they are masked in tool output,
	// events and task results.
	Secrets []string

	// PollInterval is how often the queue looks for runnable jobs when no
	// notification arrives; default 1s on Postgres, 5s on SQLite. Every insert and every wake
	// notifies the queues (LISTEN/NOTIFY on Postgres, in process on SQLite;
	// see store.QueueConfig), so the poll only catches a lost notification:
	// each poll per second costs an idle node about 0.1% of a core.
	PollInterval time.Duration
	// ControlInterval is how often a running task checks the store for a
	// cancel request or a steering message from another node; default 1s.
	ControlInterval time.Duration
	// SlotRetry is when a task waiting for a free slot of its workspace
	// tries again without a wake; default DefaultSlotRetry.
	SlotRetry time.Duration
	// HeartbeatInterval is how often running tasks prove their node alive;
	// default 10s. StaleAfter is when a silent running task belongs to a
	// dead node; default 60s.
	HeartbeatInterval time.Duration
	StaleAfter        time.Duration
	// SweepInterval is how often expired approvals are swept; default 2s.
	SweepInterval time.Duration
	// DrainTimeout is how long Stop lets running steps finish before it
	// hands the remaining tasks to another node; default 20s, negative =
	// hand them over at once.
	DrainTimeout time.Duration
	// ScratchMoveLimit bounds a scratch task's directory, packed, when a
	// drain hands the task to another node (see moveScratch); default
	// 16 MiB.
	ScratchMoveLimit int64
	// ScratchWait bounds how long a node that is to continue a scratch
	// task waits for the node holding its directory to hand it over (see
	// awaitScratch); default 30s.
	ScratchWait time.Duration
	// ScheduleInterval is how often the schedule loop looks for due
	// occurrences; default 1s. It bounds how late a run starts, not
	// whether it does: firing is decided in the store.
	ScheduleInterval time.Duration
	// CIPollInterval is how often a task waiting for CI asks the forge
	// when no check webhook woke it first; DefaultCIPollInterval when zero.
	CIPollInterval time.Duration
	// GCInterval is how often garbage collection runs on every node (its
	// own directories; the store's history on the leader only);
	// maintenance.GCEvery (an hour) when zero.
	GCInterval time.Duration
}

// Service runs tasks. Build it with New, then Start; Stop it before closing
// the store. All methods are safe for concurrent use.
type Service struct {
	cfg     Config
	st      *store.Store
	set     *config.Config
	pol     *policy.Policy
	redact  *redact.Redactor // secrets masked in events and results
	log     *slog.Logger
	now     func() time.Time
	node    string
	queue   *store.Queue
	hub     *cluster.Hub // tells this node's subscribers of a task that its log grew
	metrics *metrics
	prices  *session.Prices // every model call priced with its own model's prices

	ready    atomic.Bool // started and not stopping
	stopping atomic.Bool

	mu      sync.Mutex // Start and Stop
	started bool

	// runsMu guards runs apart from mu, which Stop holds while it waits.
	runsMu sync.Mutex
	runs   map[string]*taskrun.Run // tasks running on this node

	// The maintenance loops (see startMaintenance): bgStop ends them all,
	// each one's Stop waits for it.
	bgStop  context.CancelFunc
	maint   []maintainer
	expirer *maintenance.ApprovalExpirer

	sched   scheduleSet   // [[schedules]]
	life    nodeLife      // this node's part in the cluster (nodes.go)
	prompts promptPlugins // [[plugins]] started for MCP prompt commands

	standing standingCache // this node's copy of the standing grants (standing.go)
	memory   memoryCache   // this node's recall indexes (memory.go)
	history  historyCache  // this node's history indexes (history.go)

	// scratchMu keeps a scratch directory from being handed over while
	// this node claims its task (cluster.Scratch, claim).
	scratchMu sync.Mutex

	pub *publish.Publisher // nil when no workspace publishes (handoff.go)
	// forgeUsers caches, by workspace, the forge account its token is
	// (review.go): the bot whose own comments never steer.
	forgeUsers sync.Map
}

// New validates cfg and builds a Service. Nothing runs until Start.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("runner: a store is required")
	}
	if cfg.Providers == nil {
		return nil, errors.New("runner: a provider resolver is required")
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pol, err := session.NewPolicy(cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	s := &Service{
		cfg: cfg, st: cfg.Store, set: cfg.Settings, pol: pol, log: cfg.Logger, now: cfg.Now,
		node: cfg.Node, hub: cluster.NewHub(), runs: map[string]*taskrun.Run{},
		redact: redact.New(append(session.Secrets(cfg.Settings), cfg.Secrets...)...),
		prices: session.NewPrices(cfg.Settings),
	}
	s.metrics = newMetrics(s)
	s.life = newNodeLife(s)
	if s.pub, err = s.newPublisher(); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	if s.sched, err = s.loadSchedules(); err != nil {
		return nil, err
	}
	q, err := cfg.Store.NewQueue(store.QueueConfig{
		Handler:      store.HandlerFunc(s.runJob),
		MaxWorkers:   s.maxConcurrent(),
		JobTimeout:   s.taskTimeout() + 5*time.Minute,
		PollInterval: cfg.PollInterval,
		WakeInterval: min(max(cfg.PollInterval, 200*time.Millisecond), time.Second),
		ID:           cfg.Node,
		Alone:        s.life.scratch.Alone,
	})
	if err != nil {
		return nil, fmt.Errorf("runner: queue: %w", err)
	}
	s.queue = q
	return s, nil
}

func (s *Service) maxConcurrent() int {
	return cmp.Or(s.set.Runner.MaxConcurrentTasks, config.DefaultMaxConcurrentTasks)
}
func (s *Service) taskTimeout() time.Duration {
	return cmp.Or(s.set.Runner.TaskTimeout, config.DefaultTaskTimeout)
}
func (s *Service) approvalTTL() config.TTL {
	if s.set.Runner.ApprovalTTL.None() {
		return config.NoTTL
	}
	return min(cmp.Or(s.set.Runner.ApprovalTTL, config.TTL(config.DefaultApprovalTTL)), config.TTL(config.MaxApprovalTTL))
}

// Node is this service's node id.
func (s *Service) Node() string { return s.node }

// Start recovers tasks that were running when this node (or a node whose
// heartbeats stopped) died, marking them interrupted, then starts the
// workers, the approval expiry sweeper and the schedule loop. ctx bounds
// starting only.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("runner: already started")
	}
	// Tasks this node owned when it died are interrupted, and those of
	// nodes that stopped sending heartbeats queued again
	// (cluster.HandOver.Recover).
	if err := s.life.hand.Recover(ctx); err != nil {
		return err
	}
	// This node runs, and keeps its heartbeat; scratch directories are
	// handed over for as long as it lives, draining included: other nodes
	// may wait for them.
	if err := s.life.beat.Start(ctx); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	if err := s.queue.Start(ctx); err != nil {
		s.stopNode(ctx)
		return fmt.Errorf("runner: %w", err)
	}
	if err := s.ensureSchedules(ctx); err != nil {
		_ = s.queue.Stop(context.WithoutCancel(ctx))
		s.stopNode(ctx)
		return err
	}
	s.startMaintenance(ctx)
	s.started = true
	s.ready.Store(true)
	return nil
}

// maintainer is a background loop of package maintenance.
type maintainer interface {
	Start(ctx context.Context)
	Stop()
}

// approvalLooks is how many SweepIntervals the approval expirer waits at
// most (30 s by default): it waits for the next deadline, or for an
// approval with one stored on this node; the bound finds one stored on
// another node, or pending when this node became the leader.
const approvalLooks = 15

// startMaintenance starts the node's upkeep, each loop handed only what it
// needs. On River's elected leader only (see leads): approvals are expired
// at their deadline (looked for at least every approvalLooks
// SweepIntervals) and their tasks woken, old chat deliveries pruned
// hourly, and the schedules woken every ScheduleInterval. On every node,
// every quarter of StaleAfter, the running tasks whose node stopped
// sending heartbeats are taken over (see takeOverStale): the dead node may
// have been the leader, and River takes up to 20 s to elect another.
// Garbage collection runs hourly on every node for its own directories
// and on the leader for the store's history (see GC).
// ctx bounds nothing: the loops run until Stop.
func (s *Service) startMaintenance(ctx context.Context) {
	s.expirer = maintenance.NewApprovalExpirer(s.st, maintenance.ApprovalExpirerConfig{
		Interval: approvalLooks * s.cfg.SweepInterval, Now: s.now, Leads: s.leads, Expired: s.approvalExpired, Log: s.log,
	})
	s.maint = []maintainer{
		s.expirer,
		maintenance.NewChatEventPruner(s.st, maintenance.ChatEventPrunerConfig{
			Interval: s.cfg.SweepInterval, Now: s.now, Leads: s.leads, Log: s.log,
		}),
		maintenance.NewStaleReclaimer(maintenance.StaleReclaimerConfig{
			Interval: s.cfg.SweepInterval, Every: s.cfg.StaleAfter / 4, Now: s.now,
			Running:  s.st.RunningTasks,
			Dead:     func(t store.RunningTask) bool { return s.life.hand.Stale(t) && s.runFor(t.ID) == nil },
			TakeOver: s.takeOverStale, Parked: s.life.hand.RecoverDeadNodesParked, Log: s.log,
		}),
	}
	if s.pub != nil {
		s.maint = append(s.maint, maintenance.NewPublishRetrier(maintenance.PublishRetrierConfig{
			Due: s.st.DuePublishes, Drive: s.drivePublish, Log: s.log}))
	}
	s.maint = append(s.maint, s.newGC())
	if len(s.sched.list) > 0 {
		s.maint = append(s.maint, maintenance.NewScheduleTicker(maintenance.ScheduleTickerConfig{
			Interval: s.cfg.ScheduleInterval, Leads: s.leads, Tick: s.sched.firer.Tick, Log: s.log,
		}))
	}
	bgCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.bgStop = cancel
	for _, m := range s.maint {
		m.Start(bgCtx)
	}
}

// stopMaintenance waits for the loops bgStop ended.
func (s *Service) stopMaintenance() {
	for _, m := range s.maint {
		m.Stop()
	}
}

// Stop drains the node. Intake stops at once (Submit reports
// ErrUnavailable) and no further job is claimed; running steps may finish
// for Config.DrainTimeout; what still runs then is cut at its next safe
// point (tools' contexts end, so shell commands are killed with their
// process group and MCP servers are stopped) and handed over: its
// workspace is checkpointed (see WorkspaceReleaser) and the task is queued
// again, so another node — or this one after a restart — continues it from
// its last completed step without anyone resuming it. Stop waits for the
// workers and the maintenance loops. Give ctx more time than the drain timeout: when
// ctx ends first, the runs left are marked interrupted instead. Stop is
// idempotent.
func (s *Service) Stop(ctx context.Context) error {
	s.stopping.Store(true)
	s.ready.Store(false)
	defer s.stopPrompts(ctx) // last: a help or an intake may have started them even before Start
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil
	}
	s.started = false
	s.bgStop()
	if err := s.beatNode(ctx, store.NodeDraining); err != nil {
		s.log.Warn("runner: node heartbeat", "err", err)
	}
	drained := make(chan struct{})
	var drainer sync.WaitGroup
	drainer.Add(1)
	go func() {
		defer drainer.Done()
		s.drain(ctx, drained)
	}()
	err := s.queue.Stop(ctx)
	close(drained)
	drainer.Wait()
	s.stopMaintenance()
	s.stopNode(ctx)
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return nil
}

// Ready reports whether the service takes tasks: started, not stopping and
// the store reachable.
func (s *Service) Ready(ctx context.Context) error {
	if !s.ready.Load() {
		return failf(ErrUnavailable, "the service is not started or is shutting down")
	}
	if err := s.st.Ping(ctx); err != nil {
		return &Error{Kind: ErrUnavailable, Message: "the database does not answer", Err: err}
	}
	return nil
}

func (s *Service) cancelRuns(cause error) {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	for _, r := range s.runs {
		r.Cancel(cause)
	}
}

func (s *Service) runFor(taskID string) *taskrun.Run {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	return s.runs[taskID]
}

func (s *Service) addRun(r *taskrun.Run) {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	s.runs[r.Task().ID] = r
}

func (s *Service) removeRun(r *taskrun.Run) {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	if s.runs[r.Task().ID] == r {
		delete(s.runs, r.Task().ID)
	}
}

func (s *Service) runningIDs() []string {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	ids := make([]string, 0, len(s.runs))
	for id := range s.runs {
		ids = append(ids, id)
	}
	return ids
}
