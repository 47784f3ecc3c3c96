package procgroup

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

func bindToParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

func startBound(cmd *exec.Cmd) (func(), error) {
	bindToParent(cmd)
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		runtime.UnlockOSThread()
		return func() {}, err
	}
	return runtime.UnlockOSThread, nil
}

// bootIDFile changes with every boot; a group recorded in another boot is
// long gone, whatever now carries its number.
const bootIDFile = "/proc/sys/kernel/random/boot_id"

func identify(pid int) Identity {
	id := Identity{Group: pid, Boot: bootID()}
	id.Start, _ = startTime(pid)
	return id
}

func killIdentified(id Identity) (bool, error) {
	if id.Group <= 0 || id.Boot == "" || id.Boot != bootID() {
		return false, nil
	}
	start, err := startTime(id.Group)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// The leader is gone; members left in its group keep the number
		// from being reused, so a group that still exists is ours.
	case err != nil:
		return false, err
	case start != id.Start:
		return false, nil // the number now belongs to someone else
	}
	if err := syscall.Kill(-id.Group, syscall.SIGKILL); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func bootID() string {
	b, err := os.ReadFile(bootIDFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startTime reads field 22 of /proc/<pid>/stat. The command name (field 2)
// may contain spaces and parentheses, so fields are counted after its
// closing parenthesis.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("procgroup: unreadable stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return 0, errors.New("procgroup: short stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}
