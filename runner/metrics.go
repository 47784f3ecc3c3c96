package runner

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"reasonix/runner/store"
)

// metrics are the service's Prometheus metrics, on a registry the Service
// owns (two Services in a test do not collide). They are written in the
// Prometheus text format by hand: the client library's packages (and the
// protobuf runtime under them) initialise themselves in every process,
// which cost `reasonix run`, which exports nothing, about 4 MB of its
// peak RSS.
type metrics struct {
	reg       *registry
	submitted *counterVec
	finished  *counterVec
	duration  *histogramVec
	queueWait *histogram
	toolCalls *counterVec
	approvals *counterVec
	tokens    *counterVec
	cost      *counterVec
	unpriced  *counterVec
}

func newMetrics(s *Service) *metrics {
	m := &metrics{
		reg: &registry{},
		submitted: newCounterVec("reasonix_tasks_submitted_total", "Tasks accepted by this node, by source.",
			"source"),
		finished: newCounterVec("reasonix_tasks_finished_total", "Runs ended on this node, by final state and source.",
			"state", "source"),
		duration: newHistogramVec("reasonix_task_duration_seconds", "Duration of finished task runs, by state.",
			[]float64{1, 5, 15, 60, 300, 900, 1800, 3600, 7200}, "state"),
		toolCalls: newCounterVec("reasonix_tool_calls_total", "Tool calls started, by tool.", "tool"),
		approvals: newCounterVec("reasonix_approvals_total", "Approval requests and their outcomes.", "outcome"),
		tokens:    newCounterVec("reasonix_tokens_total", "Model tokens used, by kind.", "kind"),
		cost: newCounterVec("reasonix_cost_usd_total", "USD spent on model calls, by model (calls on models with prices).",
			"model"),
		unpriced: newCounterVec("reasonix_unpriced_tokens_total", "Tokens of model calls on models without prices, by model.",
			"model"),
	}
	queueWait := newHistogramVec("reasonix_queue_wait_seconds", "Time from queued to started.",
		[]float64{.01, .025, .05, .1, .25, .5, 1, 5, 30})
	m.queueWait = queueWait.WithLabelValues()
	m.reg.register(m.submitted, m.finished, m.duration, queueWait, m.toolCalls, m.approvals, m.tokens, m.cost, m.unpriced,
		&stateCollector{s: s}, runtimeCollector{})
	return m
}

// Metrics serves the service's metrics in the Prometheus text format.
func (s *Service) Metrics() http.Handler {
	return s.metrics.reg
}

// stateCollector reads task counts from the store at scrape time, so the
// gauges are right across nodes and restarts.
type stateCollector struct{ s *Service }

func (c *stateCollector) collect(w *bufio.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.s.st.CountTasks(ctx)
	if err != nil {
		c.s.log.Warn("runner: metrics: count tasks", "err", err)
		return
	}
	queued := 0
	slices.SortFunc(counts, func(a, b store.TaskCount) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.State, b.State))
	})
	writeHeader(w, "reasonix_tasks", "Tasks in the store, by state and source.", "gauge")
	for _, n := range counts {
		writeSample(w, "reasonix_tasks", []string{"source", "state"}, []string{string(n.Source), string(n.State)}, float64(n.N))
		if n.State == store.StateQueued {
			queued += n.N
		}
	}
	writeHeader(w, "reasonix_queue_depth", "Tasks waiting for a worker (state queued).", "gauge")
	writeSample(w, "reasonix_queue_depth", nil, nil, float64(queued))
}

// runtimeCollector exports the Go runtime's basic health.
type runtimeCollector struct{}

func (runtimeCollector) collect(w *bufio.Writer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	writeHeader(w, "go_goroutines", "Number of goroutines that currently exist.", "gauge")
	writeSample(w, "go_goroutines", nil, nil, float64(runtime.NumGoroutine()))
	writeHeader(w, "go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and still in use.", "gauge")
	writeSample(w, "go_memstats_heap_alloc_bytes", nil, nil, float64(ms.HeapAlloc))
	writeHeader(w, "go_memstats_sys_bytes", "Number of bytes obtained from system.", "gauge")
	writeSample(w, "go_memstats_sys_bytes", nil, nil, float64(ms.Sys))
}

// --- a minimal Prometheus text-format registry ---

// collector writes its families in the text format.
type collector interface{ collect(w *bufio.Writer) }

type registry struct {
	mu   sync.Mutex
	cols []collector
}

func (r *registry) register(cs ...collector) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cols = append(r.cols, cs...)
}

// ServeHTTP writes every registered family.
func (r *registry) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	r.mu.Lock()
	cols := slices.Clone(r.cols)
	r.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	bw := bufio.NewWriter(w)
	for _, c := range cols {
		c.collect(bw)
	}
	_ = bw.Flush()
}

// series is one set of label values of a vector, in registration order.
type series[T any] struct {
	mu     sync.Mutex
	byKey  map[string]*T
	values map[*T][]string
}

func (s *series[T]) get(n int, vals []string, make func() *T) *T {
	if len(vals) != n {
		panic(fmt.Sprintf("runner: metric wants %d label values, got %d", n, len(vals)))
	}
	key := strings.Join(vals, "\xff")
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.byKey[key]; ok {
		return v
	}
	if s.byKey == nil {
		s.byKey, s.values = map[string]*T{}, map[*T][]string{}
	}
	v := make()
	s.byKey[key], s.values[v] = v, slices.Clone(vals)
	return v
}

// each visits the series sorted by their label values.
func (s *series[T]) each(fn func(vals []string, v *T)) {
	s.mu.Lock()
	type kv struct {
		vals []string
		v    *T
	}
	all := make([]kv, 0, len(s.values))
	for v, vals := range s.values {
		all = append(all, kv{vals, v})
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b kv) int { return slices.Compare(a.vals, b.vals) })
	for _, e := range all {
		fn(e.vals, e.v)
	}
}

// counterVec is a counter family with labels.
type counterVec struct {
	name, help string
	labels     []string
	s          series[counter]
}

func newCounterVec(name, help string, labels ...string) *counterVec {
	return &counterVec{name: name, help: help, labels: labels}
}

// WithLabelValues is the counter of these label values, in the order the
// labels were declared.
func (v *counterVec) WithLabelValues(vals ...string) *counter {
	return v.s.get(len(v.labels), vals, func() *counter { return &counter{} })
}

func (v *counterVec) collect(w *bufio.Writer) {
	writeHeader(w, v.name, v.help, "counter")
	v.s.each(func(vals []string, c *counter) { writeSample(w, v.name, v.labels, vals, c.value()) })
}

// counter only goes up.
type counter struct{ bits atomic.Uint64 }

func (c *counter) Inc() { c.Add(1) }

// Add adds d, which must not be negative.
func (c *counter) Add(d float64) {
	if d < 0 {
		panic("runner: counter cannot decrease")
	}
	for {
		old := c.bits.Load()
		if c.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func (c *counter) value() float64 { return math.Float64frombits(c.bits.Load()) }

// histogramVec is a histogram family with labels.
type histogramVec struct {
	name, help string
	labels     []string
	buckets    []float64 // upper bounds, ascending
	s          series[histogram]
}

func newHistogramVec(name, help string, buckets []float64, labels ...string) *histogramVec {
	return &histogramVec{name: name, help: help, labels: labels, buckets: buckets}
}

// WithLabelValues is the histogram of these label values.
func (v *histogramVec) WithLabelValues(vals ...string) *histogram {
	return v.s.get(len(v.labels), vals, func() *histogram {
		return &histogram{buckets: v.buckets, counts: make([]atomic.Uint64, len(v.buckets))}
	})
}

func (v *histogramVec) collect(w *bufio.Writer) {
	writeHeader(w, v.name, v.help, "histogram")
	v.s.each(func(vals []string, h *histogram) {
		h.mu.Lock()
		defer h.mu.Unlock()
		labels, lv := append(slices.Clone(v.labels), "le"), append(slices.Clone(vals), "")
		for i, le := range h.buckets {
			lv[len(lv)-1] = formatFloat(le)
			writeSample(w, v.name+"_bucket", labels, lv, float64(h.counts[i].Load()))
		}
		lv[len(lv)-1] = "+Inf"
		writeSample(w, v.name+"_bucket", labels, lv, float64(h.n))
		writeSample(w, v.name+"_sum", v.labels, vals, h.sum)
		writeSample(w, v.name+"_count", v.labels, vals, float64(h.n))
	})
}

// histogram counts observations into cumulative buckets.
type histogram struct {
	buckets []float64
	counts  []atomic.Uint64 // cumulative: observations <= buckets[i]

	mu  sync.Mutex
	n   uint64
	sum float64
}

// Observe records one value.
func (h *histogram) Observe(x float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, le := range h.buckets {
		if x <= le {
			h.counts[i].Add(1)
		}
	}
	h.n++
	h.sum += x
}

func writeHeader(w *bufio.Writer, name, help, typ string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// writeSample writes one line; labels are written sorted by name, as
// Prometheus does.
func writeSample(w *bufio.Writer, name string, labels, vals []string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 {
		idx := make([]int, len(labels))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
		w.WriteByte('{')
		for n, i := range idx {
			if n > 0 {
				w.WriteByte(',')
			}
			w.WriteString(labels[i])
			w.WriteString(`="`)
			w.WriteString(labelEscaper.Replace(vals[i]))
			w.WriteByte('"')
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
