//go:build linux

package policy

import "golang.org/x/sys/unix"

// auditArch is the architecture the filter accepts; x32Bit marks the x32
// ABI's calls, which share it and are refused.
const (
	auditArch = unix.AUDIT_ARCH_X86_64
	x32Bit    = 0x40000000
)

// legacyMetadataCalls are the path-based metadata calls only older ABIs
// keep (arm64 has just the *at forms).
var legacyMetadataCalls = []uint32{unix.SYS_CHMOD, unix.SYS_CHOWN, unix.SYS_LCHOWN,
	unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT}

// legacyMetadata reads the arguments of the legacy metadata calls.
func legacyMetadata(nr int32, a [6]uint64) (dirfd int32, pathp uint64, follow bool, fdOnly int32, call string, ok bool) {
	dirfd, fdOnly, follow, ok = unix.AT_FDCWD, -1, true, true
	switch nr {
	case unix.SYS_CHMOD:
		pathp, call = a[0], "chmod"
	case unix.SYS_CHOWN:
		pathp, call = a[0], "chown"
	case unix.SYS_LCHOWN:
		pathp, call, follow = a[0], "chown", false
	case unix.SYS_UTIME, unix.SYS_UTIMES:
		pathp, call = a[0], "utimes"
	case unix.SYS_FUTIMESAT:
		dirfd, pathp, call = int32(a[0]), a[1], "utimes"
		if pathp == 0 {
			fdOnly = dirfd
		}
	default:
		ok = false
	}
	return
}
