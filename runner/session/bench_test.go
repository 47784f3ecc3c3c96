package session

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/config"
)

// BenchmarkBashSandboxed runs the bash tool as a session builds it, 30
// calls per variant interleaved call by call, bare ([sandbox] bash = "off")
// and sandboxed (the default, "auto"), and reports each median and their
// difference — the budget is 3 ms per call.
func BenchmarkBashSandboxed(b *testing.B) {
	build := func(mode string) agent.Tool {
		set := config.Default()
		set.Sandbox.Bash = mode
		s := newSession(b, set, nil)
		if mode == config.BashAuto && s.Confinement.SandboxKind() == "" {
			b.Skip("no OS sandbox on this host")
		}
		bash, _ := s.Agent.Tools.Get("bash")
		return bash
	}
	bare, boxed := build(config.BashOff), build(config.BashAuto)
	args := json.RawMessage(`{"command":"echo x > f"}`)
	call := func(t agent.Tool) time.Duration {
		start := time.Now()
		if _, err := t.Execute(b.Context(), args); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	call(boxed) // the sandbox's thread is set up on first use
	var bareD, boxedD []time.Duration
	for b.Loop() {
		for range 30 {
			bareD = append(bareD, call(bare))
			boxedD = append(boxedD, call(boxed))
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	mb, ms := median(bareD), median(boxedD)
	b.ReportMetric(mb, "bare-ms")
	b.ReportMetric(ms, "sandboxed-ms")
	b.ReportMetric(ms-mb, "extra-ms")
}
