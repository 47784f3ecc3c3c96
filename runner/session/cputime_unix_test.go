//go:build unix

package session

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecideCPU reports the CPU time of a route decision next to its
// wall time: on a shared, loaded machine the wall time counts the time the
// benchmark waited for a core, the CPU time (every thread's, the GC's too,
// so an upper bound) only the work.
func BenchmarkDecideCPU(b *testing.B) {
	for _, bc := range decideCases {
		b.Run(bc.name, func(b *testing.B) {
			in := RouteInput{Text: bc.text, Goal: true, Planner: true}
			start := cpuTime(b)
			n := 0
			for b.Loop() {
				Decide(in)
				n++
			}
			b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(n), "cpu-ns/op")
		})
	}
}
