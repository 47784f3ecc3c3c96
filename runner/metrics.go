package runner

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"reasonix/config"
	"reasonix/goals"
	"reasonix/runner/store"
)

// metrics are the service's Prometheus metrics, on a registry the Service
// owns (never the global one, so two Services in a test do not collide).
type metrics struct {
	reg       *prometheus.Registry
	submitted *prometheus.CounterVec
	finished  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	queueWait prometheus.Histogram
	toolCalls *prometheus.CounterVec
	approvals *prometheus.CounterVec
	tokens    *prometheus.CounterVec
	cost      *prometheus.CounterVec
	unpriced  *prometheus.CounterVec
	// delegation sums the §3.17 counters of every goal run on this node.
	delegation *prometheus.CounterVec
}

func newMetrics(s *Service) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		submitted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_tasks_submitted_total", Help: "Tasks accepted by this node, by source.",
		}, []string{"source"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_tasks_finished_total", Help: "Runs ended on this node, by final state and source.",
		}, []string{"state", "source"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "reasonix_task_duration_seconds", Help: "Duration of finished task runs, by state.",
			Buckets: []float64{1, 5, 15, 60, 300, 900, 1800, 3600, 7200},
		}, []string{"state"}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "reasonix_queue_wait_seconds", Help: "Time from queued to started.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 5, 30},
		}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_tool_calls_total", Help: "Tool calls started, by tool.",
		}, []string{"tool"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_approvals_total", Help: "Approval requests and their outcomes.",
		}, []string{"outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_tokens_total", Help: "Model tokens used, by kind.",
		}, []string{"kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_cost_usd_total", Help: "USD spent on model calls, by model (calls on models with prices).",
		}, []string{"model"}),
		unpriced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_unpriced_tokens_total", Help: "Tokens of model calls on models without prices, by model.",
		}, []string{"model"}),
		delegation: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_delegation_total", Help: "Delegation counters of goal runs (seed 3.17), by counter: subagent_runs, false_completions, ...",
		}, []string{"counter"}),
	}
	for _, f := range (goals.Counters{}).Fields() {
		m.delegation.WithLabelValues(f.Name) // every counter shows from the start
	}
	m.reg.MustRegister(m.delegation, m.submitted, m.finished, m.duration, m.queueWait, m.toolCalls, m.approvals, m.tokens, m.cost, m.unpriced,
		&stateCollector{s: s}, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// addDelegation adds one run's delegation counters.
func (m *metrics) addDelegation(c goals.Counters) {
	for _, f := range c.Fields() {
		m.delegation.WithLabelValues(f.Name).Add(float64(f.Value))
	}
}

// Metrics serves the service's metrics in the Prometheus text format.
func (s *Service) Metrics() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
}

// stateCollector reads task counts from the store at scrape time, so the
// gauges are right across nodes and restarts.
type stateCollector struct{ s *Service }

var (
	tasksDesc   = prometheus.NewDesc("reasonix_tasks", "Tasks in the store, by state and source.", []string{"state", "source"}, nil)
	queueDesc   = prometheus.NewDesc("reasonix_queue_depth", "Tasks waiting for a worker (state queued).", nil, nil)
	pendingDesc = prometheus.NewDesc("reasonix_approvals_pending", "Approvals waiting for a decision.", nil, nil)
	stalledDesc = prometheus.NewDesc("reasonix_tasks_stalled",
		"Running tasks without a new event for [runner] stall_after.", nil, nil)
	scheduleSuccessDesc = prometheus.NewDesc("reasonix_schedule_last_success_timestamp_seconds",
		"When a run of the schedule last ended well (Unix time); absent before the first.", []string{"schedule"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{tasksDesc, queueDesc, pendingDesc, stalledDesc, scheduleSuccessDesc} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.s.st.CountTasks(ctx)
	if err != nil {
		c.s.log.Warn("runner: metrics: count tasks", "err", err)
		return
	}
	queued := 0
	for _, n := range counts {
		ch <- prometheus.MustNewConstMetric(tasksDesc, prometheus.GaugeValue, float64(n.N), string(n.State), string(n.Source))
		if n.State == store.StateQueued {
			queued += n.N
		}
	}
	ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(queued))
	// What people should hear about: a call nobody decided, a task gone
	// quiet, a schedule whose good runs stopped.
	if n, err := c.s.st.CountPendingApprovals(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n))
	} else {
		c.s.log.Warn("runner: metrics: count pending approvals", "err", err)
	}
	if n, err := c.s.st.CountStalled(ctx, c.s.now().Add(-cmp.Or(c.s.set.Runner.StallAfter, config.DefaultStallAfter))); err == nil {
		ch <- prometheus.MustNewConstMetric(stalledDesc, prometheus.GaugeValue, float64(n))
	} else {
		c.s.log.Warn("runner: metrics: count stalled tasks", "err", err)
	}
	states, err := c.s.st.Schedules(ctx)
	if err != nil {
		c.s.log.Warn("runner: metrics: read schedules", "err", err)
		return
	}
	for _, st := range states {
		if !st.LastSuccessAt.IsZero() && c.s.scheduleNamed(st.Name) != nil {
			ch <- prometheus.MustNewConstMetric(scheduleSuccessDesc, prometheus.GaugeValue,
				float64(st.LastSuccessAt.UnixMilli())/1000, st.Name)
		}
	}
}
