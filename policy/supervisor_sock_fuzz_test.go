//go:build linux && (amd64 || arm64)

package policy

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// cmsg builds one control message.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	binary.NativeEndian.PutUint64(b, uint64(unix.CmsgLen(len(data))))
	binary.NativeEndian.PutUint32(b[8:], uint32(level))
	binary.NativeEndian.PutUint32(b[12:], uint32(typ))
	copy(b[unix.SizeofCmsghdr:], data)
	return b
}

// rightsSlots reads control messages a sandboxed caller wrote: whatever
// the bytes, every slot it returns lies inside them, in order, 4 bytes
// apart or more, and never inside a header.
func FuzzRightsSlots(f *testing.F) {
	fds := []byte{3, 0, 0, 0, 4, 0, 0, 0}
	f.Add(cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, fds))
	f.Add(append(cmsg(unix.SOL_SOCKET, unix.SCM_CREDENTIALS, make([]byte, 12)), cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, fds)...))
	huge := cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, fds)
	binary.NativeEndian.PutUint64(huge, 1<<62) // a length past the buffer
	f.Add(huge)
	short := cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, fds)
	binary.NativeEndian.PutUint64(short, 3) // a length inside the header
	f.Add(short)
	f.Add(cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, []byte{1, 2, 3})) // a partial descriptor
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		last := -4
		for _, at := range rightsSlots(b) {
			if at < unix.SizeofCmsghdr || at+4 > len(b) || at < last+4 {
				t.Fatalf("slot %d of %d bytes (previous %d)", at, len(b), last)
			}
			last = at
		}
	})
}

func TestRightsSlots(t *testing.T) {
	fds := []byte{3, 0, 0, 0, 4, 0, 0, 0}
	creds := cmsg(unix.SOL_SOCKET, unix.SCM_CREDENTIALS, make([]byte, 12))
	b := append(creds, cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, fds)...)
	got := rightsSlots(b)
	want := []int{len(creds) + unix.SizeofCmsghdr, len(creds) + unix.SizeofCmsghdr + 4}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("rightsSlots = %v, want %v", got, want)
	}
	if got := rightsSlots(creds); len(got) != 0 {
		t.Errorf("credentials only: %v, want no slot", got)
	}
}
