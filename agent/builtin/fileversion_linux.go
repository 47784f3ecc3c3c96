package builtin

import (
	"os"
	"syscall"

	"reasonix/agent"
)

// versionOf is the version of the file info describes: device and inode
// tell a replaced file (an atomic rename) from the one that was read, and
// the change time moves on every write even when the modification time is
// set back.
func versionOf(info os.FileInfo) agent.FileVersion {
	v := agent.FileVersion{Size: info.Size(), ModTime: info.ModTime().UnixNano()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		v.Device, v.Inode = uint64(st.Dev), uint64(st.Ino)
		v.ChangeTime = st.Ctim.Nano()
	}
	return v
}
