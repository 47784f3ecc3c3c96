package secretenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// memfdName names the handover descriptor, so Receive can tell it from
// anything else a variable could point it at.
const memfdName = "reasonix-secrets"

func reexec(h handover, env []string) error {
	fd, err := unix.MemfdCreate(memfdName, 0) // no CLOEXEC: it must survive the exec
	if err != nil {
		return fmt.Errorf("secretenv: handing the secrets over: %w", err)
	}
	f := os.NewFile(uintptr(fd), memfdName)
	defer f.Close()
	if err := json.NewEncoder(f).Encode(h); err != nil {
		return fmt.Errorf("secretenv: handing the secrets over: %w", err)
	}
	env = append(env, fdEnv+"="+strconv.Itoa(fd))
	err = syscall.Exec("/proc/self/exe", os.Args, env)
	return fmt.Errorf("secretenv: re-exec without the secrets in the environment: %w", err)
}

// Receive reads the secrets Seal handed over, when this image is the one
// it exec'd, and marks the process not dumpable. Call it first thing in
// main; it does nothing in a process Seal did not start.
func Receive() error {
	v, ok := os.LookupEnv(fdEnv)
	if !ok {
		return nil
	}
	os.Unsetenv(fdEnv) // the processes this one starts must not look for it
	state.mu.Lock()
	state.received = true
	state.mu.Unlock()
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return fmt.Errorf("secretenv: $%s = %q is not a descriptor", fdEnv, v)
	}
	if target, err := os.Readlink("/proc/self/fd/" + v); err != nil || !strings.HasPrefix(target, "/memfd:"+memfdName) {
		return fmt.Errorf("secretenv: $%s = %s is not the handover descriptor", fdEnv, v)
	}
	f := os.NewFile(uintptr(fd), memfdName)
	defer f.Close()
	if _, err := f.Seek(0, 0); err != nil {
		return fmt.Errorf("secretenv: reading the handed-over secrets: %w", err)
	}
	var h handover
	if err := json.NewDecoder(f).Decode(&h); err != nil {
		return fmt.Errorf("secretenv: reading the handed-over secrets: %w", err)
	}
	for name, v := range h.Values {
		remember(name, v, "")
	}
	for _, p := range h.Files {
		rememberFile(p)
	}
	return harden()
}

// harden makes /proc/<pid>/{environ,mem,maps,fd,...} of this process
// unreadable by other processes of the same user (they become root's),
// and forbids ptrace attach by them. An exec resets it, so the processes
// this one starts are unaffected.
func harden() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return errors.Join(errors.New("secretenv: PR_SET_DUMPABLE"), err)
	}
	return nil
}
