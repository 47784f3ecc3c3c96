package policy

import (
	"fmt"
	"io/fs"
	"syscall"
)

// statSig identifies a file's state cheaply: a change of content, mode or
// owner moves its ctime, which no command can set back, so an equal
// signature means an untouched file and the guard need not read it.
func statSig(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprint(st.Dev, st.Ino, st.Size, st.Mode, st.Ctim.Sec, st.Ctim.Nsec, st.Mtim.Sec, st.Mtim.Nsec)
}
