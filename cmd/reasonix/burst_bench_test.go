package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
)

// BenchmarkServeBurstRSS submits a burst of one-step tasks to one `serve`
// (SQLite, 16 workers, a fake model over loopback HTTP) and reports the
// resident set of the process right after the last one finished, while
// the connections the tasks used are still kept alive. A node used to
// build an HTTP client per task, each keeping its own connection, which
// held 231 MB after 9,000 tasks. REASONIX_BENCH_BURST sets the size
// (default 500); REASONIX_BENCH_BINARY measures another build instead.
func BenchmarkServeBurstRSS(b *testing.B) {
	if testing.Short() {
		b.Skip("runs hundreds of tasks on a serve process")
	}
	n := 500
	if v, err := strconv.Atoi(os.Getenv("REASONIX_BENCH_BURST")); err == nil && v > 0 {
		n = v
	}
	if bin := os.Getenv("REASONIX_BENCH_BINARY"); bin != "" {
		defer func(old string) { binary = old }(binary)
		binary = bin
	}
	for b.Loop() {
		turns := make([]agenttest.Turn, n)
		for i := range turns {
			turns[i] = answer("done")
		}
		e := newE2E(b, turns...)
		e.configure("\n[runner]\nmax_concurrent_tasks = 16\n")
		s := e.serve(b)
		ids := make([]string, n)
		for i := range ids {
			ids[i] = s.submit(fmt.Sprintf("task %d", i), nil)
		}
		for _, id := range ids {
			if got := s.waitState(id, "succeeded", "failed"); got.State != "succeeded" {
				b.Fatalf("task %s = %+v", id, got)
			}
		}
		b.ReportMetric(float64(vmKB(b, s.cmd.Process.Pid, "VmRSS:"))/1024, "MB-rss-after")
		b.ReportMetric(float64(vmKB(b, s.cmd.Process.Pid, "VmHWM:"))/1024, "MB-rss-peak")
	}
}

// vmKB reads one kB field of /proc/pid/status.
func vmKB(b *testing.B, pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
