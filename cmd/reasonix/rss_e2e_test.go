package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"reasonix/agent/agenttest"
)

// runRSSBound is the peak resident set a scripted `reasonix run` may reach.
// The budget is 18 MB; the run peaks at about 21 MB, most of it the pages
// of the binary that every package's initialisation touches, and at 24 MB
// when the binary also initialised the Prometheus client and its protobuf
// runtime. The bound catches a return of such weight.
const runRSSBound = 22 << 20

// TestRunPeakRSS: a ten-step `reasonix run` (files written, read and
// listed, commands run) peaks below runRSSBound. The median of three runs
// is taken: the peak includes the binary's pages, which vary a little
// with what the kernel maps around each fault. REASONIX_TEST_RSS_BASELINE
// names another build to measure beside this one, interleaved, for a
// before/after comparison.
func TestRunPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads ru_maxrss in kilobytes, as Linux reports it")
	}
	bins := []string{binary}
	if b := os.Getenv("REASONIX_TEST_RSS_BASELINE"); b != "" {
		bins = append(bins, b)
	}
	peaks := make([][]int64, len(bins))
	for range 3 {
		for i, bin := range bins {
			peaks[i] = append(peaks[i], runPeak(t, bin))
		}
	}
	for i, bin := range bins {
		slices.Sort(peaks[i])
		t.Logf("%s: peak RSS %v bytes, median %.1f MB", bin, peaks[i], float64(peaks[i][1])/(1<<20))
	}
	if med := peaks[0][1]; med > runRSSBound {
		t.Errorf("reasonix run peaked at %.1f MB, want at most %.1f MB", float64(med)/(1<<20), float64(runRSSBound)/(1<<20))
	}
}

// runPeak runs bin's `run` on a fresh scripted installation and returns
// its peak RSS in bytes.
func runPeak(t *testing.T, bin string) int64 {
	t.Helper()
	var turns []agenttest.Turn
	for i := range 3 {
		turns = append(turns,
			toolTurn(call(fmt.Sprintf("w%d", i), "write_file", fmt.Sprintf(`{"path":"n%d.txt","content":"note %d\n"}`, i, i))),
			toolTurn(call(fmt.Sprintf("b%d", i), "bash", fmt.Sprintf(`{"command":"cat n%d.txt >> log.txt"}`, i))),
			toolTurn(call(fmt.Sprintf("r%d", i), "read_file", `{"path":"log.txt"}`), call(fmt.Sprintf("l%d", i), "ls", `{"path":"."}`)),
		)
	}
	turns = append(turns, answer("done"))
	e := newE2E(t, turns...)
	cmd := exec.Command(bin, "run", "--auto", "write three notes")
	cmd.Dir = e.work
	cmd.Env = baseEnv(e.home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s run: %v\n%s", bin, err, out.String())
	}
	if n := len(e.srv.Requests()); n != len(turns) {
		t.Fatalf("%s: the model saw %d requests, want %d\n%s", bin, n, len(turns), out.String())
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}
