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
func legacyMetadata(nr int32, a [6]uint64) (m metaCall, ok bool) {
	m = metaCall{dirfd: unix.AT_FDCWD, fdOnly: -1, follow: true}
	switch nr {
	case unix.SYS_CHMOD:
		m.pathp, m.call, m.mode = a[0], "chmod", uint32(a[1])
	case unix.SYS_CHOWN, unix.SYS_LCHOWN:
		m.pathp, m.call, m.uid, m.gid, m.follow = a[0], "chown", int(int32(a[1])), int(int32(a[2])), nr == unix.SYS_CHOWN
	case unix.SYS_UTIME:
		m.pathp, m.call, m.times, m.timesKind = a[0], "utimes", a[1], timesUtimbuf
	case unix.SYS_UTIMES:
		m.pathp, m.call, m.times, m.timesKind = a[0], "utimes", a[1], timesTimeval
	case unix.SYS_FUTIMESAT:
		m.dirfd, m.pathp, m.call, m.times, m.timesKind = int32(a[0]), a[1], "utimes", a[2], timesTimeval
		if m.pathp == 0 {
			m.fdOnly = m.dirfd
		}
	default:
		return m, false
	}
	return m, true
}
