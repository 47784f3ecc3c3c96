package policy

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkSandboxedBash runs a trivial writer (`echo x > f`) bare and in
// each available sandbox, interleaved call by call so that load on the
// machine hits every variant alike, and reports the median of each and
// the sandbox's extra cost per call. Run it as
//
//	go test ./policy -run '^$' -bench SandboxedBash -benchtime 30x
//
// The Landlock helper is this test binary unless REASONIX_SANDBOX_HELPER
// names a reasonix binary (whose start-up is the one that ships).
func BenchmarkSandboxedBash(b *testing.B) {
	ws := b.TempDir()
	variants := []struct {
		name string
		argv func() []string
	}{{"bare", func() []string { return []string{"bash", "-c", "echo x > f"} }}}
	var inproc *landlockShell
	for _, kind := range []string{SandboxLandlock, SandboxBwrap} {
		c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, force: kind})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if c.SandboxKind() != kind {
			b.Logf("%s is not usable here", kind)
			continue
		}
		if l, ok := c.shell.(*landlockShell); ok {
			if exe := os.Getenv("REASONIX_SANDBOX_HELPER"); exe != "" {
				l.exe = exe
			}
		}
		if l, ok := c.shell.(*landlockShell); ok {
			inproc = l
		}
		variants = append(variants, struct {
			name string
			argv func() []string
		}{kind, func() []string {
			argv, err := c.Shell().WrapShell(ws, "echo x > f")
			if err != nil {
				b.Fatal(err)
			}
			return argv
		}})
	}
	// StartShell: Landlock applied by a restricted thread of this process.
	if inproc != nil {
		variants = append(variants, struct {
			name string
			argv func() []string
		}{"landlock-thread", nil})
	}
	times := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			var cmd *exec.Cmd
			if v.argv == nil {
				cmd = exec.Command("bash", "-c", "echo x > f")
			} else {
				argv := v.argv()
				cmd = exec.Command(argv[0], argv[1:]...)
			}
			cmd.Dir = ws
			start := time.Now()
			var err error
			if v.argv == nil {
				if err = inproc.StartShell(cmd); err == nil {
					err = cmd.Wait()
				}
			} else {
				err = cmd.Run()
			}
			if err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	median := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2]) / float64(time.Millisecond)
	}
	bare := median(times[0])
	b.ReportMetric(bare, "bare-ms")
	for i, v := range variants[1:] {
		m := median(times[i+1])
		b.ReportMetric(m, v.name+"-ms")
		b.ReportMetric(m-bare, v.name+"-extra-ms")
	}
	b.ReportMetric(0, "ns/op") // the per-variant medians are the result
}
