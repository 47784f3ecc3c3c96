//go:build !windows

package procgroup

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"reasonix/internal/eventually"
)

func TestKillTakesTheWholeGroup(t *testing.T) {
	cmd := exec.Command("bash", "-c", "sleep 100 & echo $!; wait")
	Detach(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("reading the background pid: %v (%q)", err, buf[:n])
	}
	if err := Kill(cmd); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	eventually.True(t, 0, func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		gone := err != nil || strings.Contains(string(stat), ") Z ")
		return gone || syscall.Kill(child, 0) != nil
	}, "background child %d survived Kill", child)
}

func TestKillBeforeStartAndAfterExit(t *testing.T) {
	cmd := exec.Command("true")
	if err := Kill(cmd); err != nil {
		t.Errorf("kill before start: %v", err)
	}
	Detach(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := Kill(cmd); err != nil {
		t.Errorf("kill after exit: %v", err)
	}
}
