package policy

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchVariant is one way of running a script, timed call by call.
type benchVariant struct {
	name string
	run  func(script string) error
	// proxyCPU is the CPU time the variant's supervisor proxy has used so
	// far (a process of its own, reaped only when the sandbox closes);
	// nil without one.
	proxyCPU func() time.Duration
}

// sandboxVariants returns bare bash and each sandbox this host offers:
// the Landlock thread (StartShell) and bubblewrap, each thread-started one with and without the seccomp
// supervisor (which here checks every exec against a deny rule).
func sandboxVariants(b *testing.B, ws string) []benchVariant {
	return sandboxVariantsNet(b, ws, false)
}

// sandboxVariantsNet is sandboxVariants with the network allowed or not.
func sandboxVariantsNet(b *testing.B, ws string, network bool) []benchVariant {
	vs := []benchVariant{{name: "bare", run: func(script string) error {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = ws
		return cmd.Run()
	}}}
	for _, kind := range []string{SandboxLandlock, SandboxBwrap} {
		for _, supervised := range []bool{false, true} {
			c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, Network: network, force: kind, ExecDenied: denyRM, ExecDenyNames: []string{"rm"}})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			if c.SandboxKind() != kind {
				b.Logf("%s is not usable here", kind)
				break
			}
			if supervised && c.sup == nil {
				b.Logf("the seccomp supervisor is not usable here")
				continue
			}
			if !supervised {
				c.sup = nil
			}
			name := kind + "-thread"
			if kind == SandboxBwrap {
				name = kind
			}
			if supervised {
				name += "-supervised"
			}
			starter := c.Shell().(interface{ StartShell(*exec.Cmd) error })
			v := benchVariant{name: name, run: func(script string) error {
				cmd := exec.Command("bash", "-c", script)
				cmd.Dir = ws
				if err := starter.StartShell(cmd); err != nil {
					return err
				}
				return cmd.Wait()
			}}
			if supervised {
				v.proxyCPU = func() time.Duration {
					c.sup.mu.Lock()
					defer c.sup.mu.Unlock()
					if c.sup.proxy == nil {
						return 0
					}
					return processCPU(c.sup.proxy.Process.Pid)
				}
			}
			vs = append(vs, v)
		}
	}
	return vs
}

// benchInterleaved runs script once per variant per iteration, so that
// load on the machine hits every variant alike, and reports the median of
// each and its extra cost over the first variant.
func benchInterleaved(b *testing.B, vs []benchVariant, script, unit string) {
	times := make([][]time.Duration, len(vs))
	cpu := make([]time.Duration, len(vs))
	calls := 0
	for b.Loop() {
		calls++
		for i, v := range vs {
			cpu0 := treeCPU() + proxyCPU(v)
			start := time.Now()
			if err := v.run(script); err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			times[i] = append(times[i], time.Since(start))
			cpu[i] += treeCPU() + proxyCPU(v) - cpu0
		}
	}
	median := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2]) / float64(time.Millisecond)
	}
	// The minimum is what a call costs when nothing else competes for
	// the machine; the median is the typical call.
	least := func(d []time.Duration) float64 { return float64(slices.Min(d)) / float64(time.Millisecond) }
	bare := median(times[0])
	b.ReportMetric(bare, vs[0].name+"-"+unit)
	b.ReportMetric(least(times[0]), vs[0].name+"-min-"+unit)
	for i, v := range vs[1:] {
		m := median(times[i+1])
		b.ReportMetric(m, v.name+"-"+unit)
		b.ReportMetric(m-bare, v.name+"-extra-"+unit)
		b.ReportMetric(least(times[i+1]), v.name+"-min-"+unit)
	}
	// CPU time per call (this process, the children it reaped, the
	// proxy): on a machine loaded by others, the steadier figure.
	perCall := func(i int) float64 { return float64(cpu[i]) / float64(calls) / float64(time.Millisecond) }
	for i, v := range vs {
		b.ReportMetric(perCall(i), v.name+"-cpu-"+unit)
		if i > 0 {
			b.ReportMetric(perCall(i)-perCall(0), v.name+"-extra-cpu-"+unit)
		}
	}
	b.ReportMetric(0, "ns/op") // the per-variant medians are the result
}

// treeCPU is the CPU time this process and its reaped children used.
func treeCPU() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	d := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return d(self.Utime) + d(self.Stime) + d(children.Utime) + d(children.Stime)
}

func proxyCPU(v benchVariant) time.Duration {
	if v.proxyCPU == nil {
		return 0
	}
	return v.proxyCPU()
}

// processCPU is the CPU time (utime and stime, 10 ms ticks) of process pid.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// BenchmarkSandboxedBash times a trivial writer (`echo x > f`) bare and
// in each sandbox. Run it as
//
//	go test ./policy -run '^$' -bench SandboxedBash -benchtime 30x -count 6
func BenchmarkSandboxedBash(b *testing.B) {
	benchInterleaved(b, sandboxVariants(b, b.TempDir()), "echo x > f", "ms")
}

// BenchmarkSandboxedExecs times one bash call running /bin/true 100
// times: the supervisor's cost per exec is a hundredth of the
// difference between the supervised variants and the others.
func BenchmarkSandboxedExecs(b *testing.B) {
	benchInterleaved(b, sandboxVariants(b, b.TempDir()), "for i in $(seq 100); do /bin/true; done", "ms")
}

// BenchmarkSandboxedConnects times one bash call making 100 TCP connects
// to a loopback listener, with the network allowed: the supervisor's cost
// per connect (it performs each one itself) is a hundredth of the
// difference between the supervised variants and the others.
func BenchmarkSandboxedConnects(b *testing.B) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	defer func() { ln.Close(); <-done }()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	script := "for i in $(seq 100); do exec 3<>/dev/tcp/127.0.0.1/" + port + "; exec 3<&-; done"
	benchInterleaved(b, sandboxVariantsNet(b, b.TempDir(), true), script, "ms")
}

// denyRM is a matcher denying rm, as Bash(rm:*) would.
func denyRM(name string, _ []string) (string, bool) {
	if name == "rm" {
		return "Bash(rm:*)", true
	}
	return "", false
}

// BenchmarkSandboxedChmods times one bash call in which perl changes a
// file's mode 1,000 times: under Landlock the supervisor decides each
// chmod (and makes it itself on the file it checked), so its cost per
// chmod is a thousandth of the difference between the Landlock variant
// and the bare one.
func BenchmarkSandboxedChmods(b *testing.B) {
	if _, err := exec.LookPath("perl"); err != nil {
		b.Skip("perl is not installed")
	}
	benchInterleaved(b, sandboxVariants(b, b.TempDir()), `touch f && perl -e 'chmod 0644, "f" for 1..1000'`, "ms")
}
