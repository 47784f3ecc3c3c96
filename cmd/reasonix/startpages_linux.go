package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// releaseStartPages drops this process's mappings of the binary's code and
// read-only data (not the page cache: the pages stay in memory for every
// other process and come back on the next touch). By the time main runs,
// the Go runtime and the initialisation of ~200 packages have touched
// pages all over the 35 MB binary: ~9 MB counted in RSS that a `reasonix
// run` mostly never executes again (~18 MB before internal/faultaround
// kept the kernel from mapping 64 KiB around each fault; the runtime's
// own start, before any package initialises, still faults that way).
//
// Only a read-only mapping that still holds the file's own bytes is
// dropped. A writable one would lose what was written, and so would a
// read-only one with private copies in it: a binary linked with cgo has
// its relocated pointers (RELRO) written at load and then made read-only,
// and dropping those pages would bring back the unrelocated file bytes.
// smaps shows such copies as Anonymous.
func releaseStartPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	var start, end uint64
	ours := false // the mapping being read is a read-only one of exe
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			// A mapping's header: "start-end perms offset dev inode [path]".
			ours = false
			if len(fields) < 6 || fields[5] != exe || (fields[1] != "r-xp" && fields[1] != "r--p") {
				continue
			}
			lo, hi, _ := strings.Cut(fields[0], "-")
			var err1, err2 error
			start, err1 = strconv.ParseUint(lo, 16, 64)
			end, err2 = strconv.ParseUint(hi, 16, 64)
			ours = err1 == nil && err2 == nil && end > start
			continue
		}
		// "Anonymous:" comes once per mapping, after its header.
		if !ours || len(fields) < 2 || fields[0] != "Anonymous:" {
			continue
		}
		ours = false
		if fields[1] != "0" {
			continue // private copies: not the file's bytes any more
		}
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED)
	}
}
