//go:build linux

package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/internal/eventually"
)

// TestBwrapLeavesNothingWhenItDies: the promise behind Contained, which lets
// the bash tool skip recording its process group for crash recovery. A
// command's detached background process (its own session, as a daemon
// would start) dies when bubblewrap is killed.
func TestBwrapLeavesNothingWhenItDies(t *testing.T) {
	needBwrap(t)
	ws, _ := hostDirs(t)
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, force: SandboxBwrap})
	if err != nil {
		t.Fatal(err)
	}
	sh := c.Shell()
	if cs, ok := sh.(agent.ShellContained); !ok || !cs.Contained() {
		t.Fatalf("the bubblewrap shell %T does not say it is contained", sh)
	}
	// A sleep no other process on the machine runs: its arguments mark it.
	marker := fmt.Sprintf("%d.%03d", 3000+os.Getpid()%1000, time.Now().Nanosecond()%1000)
	argv, err := sh.WrapShell(ws, "setsid sleep "+marker+" </dev/null >/dev/null 2>&1 & echo started; wait")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("the sandbox said %q, %v", line, err)
	}
	running := func() bool { return processWithArgs("sleep", marker) }
	eventually.True(t, 10*time.Second, running, "the background sleep never showed up")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	eventually.True(t, 10*time.Second, func() bool { return !running() }, "the background sleep outlived bubblewrap")
}

// processWithArgs reports whether a process on this machine runs with
// exactly these arguments.
func processWithArgs(args ...string) bool {
	want := []byte(strings.Join(args, "\x00") + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		if b, err := os.ReadFile(d); err == nil && bytes.Equal(b, want) {
			return true
		}
	}
	return false
}
