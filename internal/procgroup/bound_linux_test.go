package procgroup

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/internal/eventually"
)

// gone reports whether pid has exited (or is a zombie nobody reaped yet).
func gone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(stat), ") Z ")
}

// signalled reports whether pid is gone, exiting, or has a signal pending:
// a kill sent to it has landed even if it has not died yet. It is how a test
// proves a process was NOT killed without waiting to see: kill(2) queues its
// signal before returning, and a fatal one marks the process as exiting.
func signalled(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// After the command name: state, ppid, pgrp, session, tty, tpgid, flags.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 7 || f[0] == "Z" || f[0] == "X" {
		return true
	}
	if flags, _ := strconv.ParseUint(f[6], 10, 64); flags&pfExiting != 0 {
		return true
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		name, mask, _ := strings.Cut(line, ":")
		if (name == "SigPnd" || name == "ShdPnd") && strings.Trim(strings.TrimSpace(mask), "0") != "" {
			return true
		}
	}
	return false
}

// pfExiting is the kernel's PF_EXITING task flag (include/linux/sched.h).
const pfExiting = 0x4

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	t.Cleanup(func() {
		if !gone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	eventually.True(t, 5*time.Second, func() bool { return gone(pid) }, "%s (pid %d) is still alive", what, pid)
}

// TestMain doubles as the helper parent of TestStartBoundDiesWithParent:
// started with PROCGROUP_HELPER set, it starts a bound sleep, prints its
// pid and dies the way a crashing service does.
func TestMain(m *testing.M) {
	if os.Getenv("PROCGROUP_HELPER") == "1" {
		cmd := exec.Command("sleep", "100")
		Detach(cmd)
		if _, err := StartBound(cmd); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	os.Exit(m.Run())
}

func TestStartBoundDiesWithParent(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "PROCGROUP_HELPER=1")
	out, _ := helper.Output() // killed by SIGKILL: an error is expected
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("helper said %q", out)
	}
	waitGone(t, pid, "the child of a SIGKILLed parent")
}

// TestStartBoundOutlivesOtherThreads: threads that other goroutines take
// down (by exiting while locked to them) do not kill a bound child, because
// the thread that started it stays with the caller until done.
func TestStartBoundOutlivesOtherThreads(t *testing.T) {
	cmd := exec.Command("sleep", "100")
	Detach(cmd)
	done, err := StartBound(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		Kill(cmd)
		cmd.Wait()
		done()
	}()
	var tids []int
	for range 20 {
		tid := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tid <- syscall.Gettid()
		}()
		if id := <-tid; id != os.Getpid() { // the main thread is parked, not ended
			tids = append(tids, id)
		}
	}
	// Once the threads are gone, a parent-death signal they caused has been
	// sent: the kernel sends it as the thread exits.
	eventually.True(t, 0, func() bool {
		for _, id := range tids {
			if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(id)); err == nil {
				return false
			}
		}
		return true
	}, "the threads locked by ended goroutines did not end")
	if signalled(cmd.Process.Pid) {
		t.Fatal("the bound child was killed when other threads exited")
	}
}

// orphanGroup starts a group whose leader exits at once and leaves a
// sleeping member behind, as a crash leaves a tool's background process.
func orphanGroup(t *testing.T) (Identity, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "sleep 100 & echo $!; read")
	Detach(cmd)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id := Identify(cmd.Process.Pid)
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	member, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("reading the member's pid: %v (%q)", err, line)
	}
	stdin.Close() // the leader exits, the member stays
	cmd.Wait()
	t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL) })
	return id, member
}

func TestKillIdentifiedTakesAnOrphanedGroup(t *testing.T) {
	id, member := orphanGroup(t)
	if id.Boot == "" || id.Start == 0 {
		t.Fatalf("identity %+v lacks the boot id or the start time", id)
	}
	killed, err := KillIdentified(id)
	if err != nil || !killed {
		t.Fatalf("KillIdentified = %v, %v", killed, err)
	}
	if !signalled(member) { // what the tests that prove a process was spared rely on
		t.Error("the member reads as not signalled right after the kill")
	}
	waitGone(t, member, "the orphaned member")
}

func TestKillIdentifiedSparesAnotherGroup(t *testing.T) {
	// A live leader with another start time: the number was reused.
	cmd := exec.Command("sleep", "100")
	Detach(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { Kill(cmd); cmd.Wait() }()
	id := Identify(cmd.Process.Pid)
	for name, other := range map[string]Identity{
		"other start": {Group: id.Group, Boot: id.Boot, Start: id.Start + 1},
		"other boot":  {Group: id.Group, Boot: "another-boot", Start: id.Start},
		"no boot":     {Group: id.Group, Start: id.Start},
	} {
		if killed, err := KillIdentified(other); killed || err != nil {
			t.Errorf("%s: KillIdentified = %v, %v; want nothing killed", name, killed, err)
		}
	}
	if signalled(cmd.Process.Pid) {
		t.Fatal("a group with another identity was killed")
	}
}
