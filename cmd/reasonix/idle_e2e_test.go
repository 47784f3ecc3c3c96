package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/runner/store/storetest"
)

// idleBound is the share of one core an idle `serve` may use before
// TestServeIdleCPU fails. The budget is 0.5 %; the bound is generous
// because the test machine is shared, and a regression to a tight poll
// (5 % before the queue stopped polling every 50 ms) still fails it.
const idleBound = 0.02

// TestServeIdleCPU: a `serve` with nothing to do and no bot configured
// barely uses the CPU, on SQLite and on Postgres: its maintenance loops
// wait on notifications and timers rather than polling tightly.
func TestServeIdleCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the child's CPU time from /proc")
	}
	if testing.Short() {
		t.Skip("measures for 10 s per database")
	}
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			used, window := idleServeCPU(t, driver, 10*time.Second)
			share := used.Seconds() / window.Seconds()
			t.Logf("idle %s serve: %v of CPU in %v (%.2f %% of a core)", driver, used, window, share*100)
			if share > idleBound {
				t.Errorf("idle serve used %.2f %% of a core, want at most %.1f %%", share*100, idleBound*100)
			}
		})
	}
}

// BenchmarkIdleServe measures the share of a core an idle `serve` (no
// bot, no schedules, nothing queued) uses over REASONIX_BENCH_IDLE (a
// duration, default 30s) on each database, from its utime+stime in
// /proc (10 ms ticks: 30 s resolve 0.03 %). The budget is 0.5 %.
// REASONIX_BENCH_BINARY measures another build instead.
func BenchmarkIdleServe(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads the child's CPU time from /proc")
	}
	if bin := os.Getenv("REASONIX_BENCH_BINARY"); bin != "" {
		defer func(old string) { binary = old }(binary)
		binary = bin
	}
	window := 30 * time.Second
	if v := os.Getenv("REASONIX_BENCH_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("REASONIX_BENCH_IDLE: %v", err)
		}
		window = d
	}
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run(driver, func(b *testing.B) {
			for b.Loop() {
				used, took := idleServeCPU(b, driver, window)
				b.ReportMetric(100*used.Seconds()/took.Seconds(), "%core")
			}
		})
	}
}

// idleServeCPU starts `serve` on driver's store, lets it settle, and
// returns the CPU time it used over about window, and the window.
func idleServeCPU(t testing.TB, driver string, window time.Duration) (used, took time.Duration) {
	t.Helper()
	e := newE2E(t)
	var env []string
	if driver == "postgres" {
		env = append(env, "RX_TEST_DSN="+storetest.PostgresDSN(t))
		e.configure("\n[store]\ndriver = \"postgres\"\ndsn_env = \"RX_TEST_DSN\"\n")
	}
	s := e.serve(t, env...)
	// Starting (migrations, River's first election and fetch) is not
	// idling: the window opens once that has settled.
	<-time.After(2 * time.Second)
	before := cpuTime(t, s.cmd.Process.Pid)
	start := time.Now()
	<-time.After(window)
	return cpuTime(t, s.cmd.Process.Pid) - before, time.Since(start)
}

// cpuTime is the user and system time process pid has used so far.
func cpuTime(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start at field 3, so utime (14) and stime (15)
	// are the 12th and 13th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		t.Fatalf("unexpected /proc/%d/stat: %q", pid, b)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("unexpected /proc/%d/stat: %q", pid, b)
		}
		ticks += n
	}
	// Linux reports these in USER_HZ, 100 per second on every
	// architecture Go supports.
	return time.Duration(ticks) * (time.Second / 100)
}
