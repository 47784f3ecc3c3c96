//go:build linux

package policy

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
)

var legacyMetadataCalls []uint32

func legacyMetadata(int32, [6]uint64) (metaCall, bool) { return metaCall{}, false }
