//go:build linux

package policy

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// devices stay writable: shells redirect to them all the time. /dev/tty
// gets no ioctl right, so nothing can push input into a terminal.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// restrictAndExec applies the spec to this thread and execs the command.
// The thread is locked and never unlocked: Landlock binds the calling
// thread, and exec keeps only that thread.
func restrictAndExec(s execSpec) error {
	cfg := landlock.V10 // every right the library knows; BestEffort trims to the kernel
	if s.network {
		cfg.HandledAccessNet = 0
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(landlockRules(s)...)
	if err != nil {
		return fmt.Errorf("building the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return fmt.Errorf("the kernel does not offer Landlock")
	}
	if s.dir != "" {
		if err := os.Chdir(s.dir); err != nil {
			return err
		}
	}
	bin, err := exec.LookPath(s.argv[0])
	if err != nil {
		return err
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	if s.tmp != "" {
		env = append(env, "TMPDIR="+s.tmp)
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("applying Landlock: %w", err)
	}
	unix.Close(fd)
	return syscall.Exec(bin, s.argv, env)
}

// landlockRules grants reading everywhere but the hidden paths, and
// writing in the writable roots (minus hidden paths), the private tmp and
// the devices: readRules and writeRules in one ruleset.
func landlockRules(s execSpec) []landlock.Rule {
	return append(readRules(coverOf("/", s.hide)), writeRules(s)...)
}

// readRules grants reading the cover of / minus the hidden paths.
func readRules(read cover) []landlock.Rule {
	return []landlock.Rule{
		// A listed entry may vanish before its rule is added.
		landlock.RODirs(read.dirs...).IgnoreIfMissing(),
		landlock.ROFiles(read.files...).IgnoreIfMissing(),
		landlock.PathAccess(ll.AccessFSReadDir, read.walked...).IgnoreIfMissing(),
	}
}

// writeRules grants writing (and reading) in the writable roots minus the
// hidden paths, the private tmp and the devices above.
func writeRules(s execSpec) []landlock.Rule {
	rules := []landlock.Rule{landlock.RWFiles(devices...).IgnoreIfMissing()}
	rw := s.rw
	if s.tmp != "" {
		rw = append(slices.Clip(rw), s.tmp)
	}
	for _, root := range rw {
		if _, err := os.Stat(root); err != nil {
			continue // nothing to write into yet
		}
		w := coverOf(root, s.hide)
		rules = append(rules,
			landlock.RWDirs(w.dirs...).WithRefer().IgnoreIfMissing(),
			landlock.RWFiles(w.files...).IgnoreIfMissing(),
		)
	}
	return rules
}
