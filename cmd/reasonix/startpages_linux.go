package main

import (
	byteorder "encoding/binary"
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
// /proc/self/pagemap tells such a copy from a page of the file (its
// "file page" bit is clear). /proc/self/maps and the pagemap entries of
// the binary's few mappings are what is read, not smaps: smaps walks
// every mapping of the process to count its pages, which cost ~10 % of
// `reasonix version`'s start-up CPU.
func releaseStartPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return
	}
	defer pagemap.Close()
	page := uint64(os.Getpagesize())
	// Adjacent mappings (code, then read-only data) are dropped in one
	// call: each call flushes the TLB of every CPU the process ran on,
	// which costs a millisecond or more in a virtual machine.
	var from, to uint64
	drop := func() {
		if to > from {
			_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(from), uintptr(to-from), unix.MADV_DONTNEED)
		}
	}
	for line := range strings.SplitSeq(string(maps), "\n") {
		// "start-end perms offset dev inode [path]"
		fields := strings.Fields(line)
		if len(fields) != 6 || fields[5] != exe || (fields[1] != "r-xp" && fields[1] != "r--p") {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start || start%page != 0 || end%page != 0 {
			continue
		}
		if !fileBytesOnly(pagemap, start, end, page) {
			continue // private copies: not the file's bytes any more
		}
		if start != to {
			drop()
			from = start
		}
		to = end
	}
	drop()
}

// Bits of a /proc/self/pagemap entry (Documentation/admin-guide/mm/pagemap.rst).
const (
	pagePresent  = 1 << 63
	pageSwapped  = 1 << 62
	pageFileOrSh = 1 << 61
)

// fileBytesOnly reports whether every page of [start, end) that is in
// memory is a page of the file, none a private copy (or swapped out,
// which only a private copy can be); false when the pagemap cannot be read.
func fileBytesOnly(pagemap *os.File, start, end, page uint64) bool {
	buf := make([]byte, 8*min((end-start)/page, 4096))
	for addr := start; addr < end; {
		n := min(uint64(len(buf)), (end-addr)/page*8)
		if _, err := pagemap.ReadAt(buf[:n], int64(addr/page*8)); err != nil {
			return false
		}
		for i := uint64(0); i < n; i += 8 {
			e := byteorder.NativeEndian.Uint64(buf[i:])
			if e&pageSwapped != 0 || e&pagePresent != 0 && e&pageFileOrSh == 0 {
				return false
			}
		}
		addr += n / 8 * page
	}
	return true
}
