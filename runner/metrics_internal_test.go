package runner

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetricsTextFormat: the hand-written registry writes what Prometheus
// parses: HELP and TYPE lines, label names sorted, label values escaped,
// series sorted, and cumulative histogram buckets with their sum and count.
func TestMetricsTextFormat(t *testing.T) {
	reg := &registry{}
	c := newCounterVec("x_total", "Things.", "tool", "outcome")
	c.WithLabelValues("bash", "ok").Inc()
	c.WithLabelValues("bash", "ok").Add(2.5)
	c.WithLabelValues("a\"b\\c\nd", "no").Inc()
	h := newHistogramVec("y_seconds", "Waits.", []float64{0.5, 1}, "state")
	for _, v := range []float64{0.25, 0.75, 3} {
		h.WithLabelValues("done").Observe(v)
	}
	reg.register(c, h)
	rec := httptest.NewRecorder()
	reg.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	want := `# HELP x_total Things.
# TYPE x_total counter
x_total{outcome="no",tool="a\"b\\c\nd"} 1
x_total{outcome="ok",tool="bash"} 3.5
# HELP y_seconds Waits.
# TYPE y_seconds histogram
y_seconds_bucket{le="0.5",state="done"} 1
y_seconds_bucket{le="1",state="done"} 2
y_seconds_bucket{le="+Inf",state="done"} 3
y_seconds_sum{state="done"} 4
y_seconds_count{state="done"} 3
`
	if got := rec.Body.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
}
