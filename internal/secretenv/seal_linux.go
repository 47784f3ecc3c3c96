package secretenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// scrubInPlace is how Seal takes variables out of the block the kernel
// shows without a re-exec; tests set it to nil to exercise the re-exec.
var scrubInPlace = scrubEnvironBlock

// scrubEnvironBlock overwrites every entry of the exec-time environment
// block (what /proc/<pid>/environ shows, for the life of the process)
// whose name is one of names with zero bytes, through /proc/self/mem, and
// checks through /proc/self/environ that none is left. The block is the
// process's own writable stack; nothing in Go reads a secret from it any
// more once Receive has detached the environment.
func scrubEnvironBlock(names []string) error {
	start, end, err := environBounds()
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return err
	}
	if blank(block, names) {
		if _, err := mem.WriteAt(block, int64(start)); err != nil {
			return err
		}
	}
	shown, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return err
	}
	if blank(shown, names) {
		return errors.New("secretenv: the environment block still holds a secret")
	}
	return nil
}

// environBounds reads where the exec-time environment block lies
// (env_start and env_end, fields 50 and 51 of /proc/self/stat).
func environBounds() (start, end uint64, err error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// from the last ")".
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(fields) < 49 {
		return 0, 0, errors.New("secretenv: /proc/self/stat has no environment bounds")
	}
	start, err1 := strconv.ParseUint(fields[47], 10, 64)
	end, err2 := strconv.ParseUint(fields[48], 10, 64)
	if err1 != nil || err2 != nil || start == 0 || end <= start || end-start > 1<<30 || start > math.MaxInt64-(end-start) {
		return 0, 0, fmt.Errorf("secretenv: /proc/self/stat gives the environment block as %q..%q", fields[47], fields[48])
	}
	return start, end, nil
}

// Receive reads the secrets Seal handed over, when this image is the one
// it exec'd, and marks the process not dumpable. Call it first thing in
// main. In a process Seal did not start, it gives the environment copies
// of its own (detach) and, when it holds a secret, marks the process not
// dumpable at once, so other processes cannot read /proc/<pid>/environ
// before Seal blanks it.
func Receive() error {
	v, ok := os.LookupEnv(fdEnv)
	if !ok {
		detach()
		if len(newPlan(nil, os.Environ()).scrub) > 0 {
			return harden()
		}
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
