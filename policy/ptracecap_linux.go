//go:build linux

package policy

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// inspecting are the capabilities that open another process's
// /proc/<pid>/environ, maps, mem and fd links although that process is
// not dumpable: measured on a 6.x kernel, CAP_SYS_PTRACE opens all of
// them, and CAP_SYS_ADMIN or CAP_PERFMON open environ and maps.
var inspecting = []int{unix.CAP_SYS_PTRACE, unix.CAP_SYS_ADMIN, unix.CAP_PERFMON}

// dropTracing takes the inspecting capabilities from the calling thread,
// its bounding set and its ambient set, so nothing the thread starts can
// get them back, not even a root process through exec.
//
// Why: the kernel guards /proc/<pid>/environ, mem, maps and the fd links
// of a process that is not dumpable (the service sets PR_SET_DUMPABLE to
// 0 after start-up) by these capabilities. A service running as root
// would otherwise hand them to every sandboxed command, and with them the
// service's memory — every secret it holds. Landlock's ptrace scoping did
// not stop a sandboxed command reading its parent's entries on the kernel
// measured (6.18, ABI 7), so this does not rely on it.
//
// A thread without CAP_SETPCAP cannot shrink its bounding set; it runs
// unprivileged then, and no_new_privs keeps exec from granting file
// capabilities, so clearing the thread's own sets is enough.
func dropTracing() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	for _, c := range inspecting {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err != nil && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
		// Lowering a capability outside the ambient set is a no-op; old
		// kernels lack the ambient set or the capability (EINVAL).
		err = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_LOWER, uintptr(c), 0, 0)
		if err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d from the ambient set: %w", c, err)
		}
		d, bit := &data[c/32], uint32(1)<<(c%32)
		d.Effective &^= bit
		d.Permitted &^= bit
		d.Inheritable &^= bit
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("dropping the capabilities that inspect other processes: %w", err)
	}
	return nil
}
