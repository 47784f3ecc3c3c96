//go:build linux && (amd64 || arm64)

package faultaround

import (
	"encoding/binary"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// present reports which of the n pages from addr are mapped in this
// process (bit 63 of their /proc/self/pagemap entries).
func present(t *testing.T, addr uintptr, n int) []bool {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer f.Close()
	page := uintptr(os.Getpagesize())
	buf := make([]byte, 8*n)
	if _, err := f.ReadAt(buf, int64(addr/page*8)); err != nil {
		t.Fatal(err)
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(buf[8*i:])&(1<<63) != 0
	}
	return out
}

// mappedAround maps the test binary afresh (its pages are in the page
// cache: it is running), optionally registers the mapping, reads one page
// in each of a few 64 KiB windows, and returns how many pages per read
// ended up mapped.
func mappedAround(t *testing.T, register bool) float64 {
	t.Helper()
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	base := uintptr(unsafe.Pointer(&m[0]))
	if register {
		fd, ok := open()
		if !ok {
			t.Skip("the kernel refuses userfaultfd with asynchronous write-protection (Linux < 6.7, or a seccomp profile)")
		}
		defer syscall.Close(fd)
		if !registerRange(fd, base, uintptr(len(m))&^uintptr(os.Getpagesize()-1)) {
			t.Fatal("registering a private read-only file mapping failed")
		}
	}
	const window = 16
	page := os.Getpagesize()
	reads, mapped := 0, 0
	sum := 0
	for off := 0; off+window*page <= len(m) && reads < 32; off += 4 * window * page {
		sum += int(m[off+window/2*page]) // the middle page of the window
		reads++
		for _, p := range present(t, base+uintptr(off), window) {
			if p {
				mapped++
			}
		}
	}
	t.Logf("register=%v: %d reads mapped %d pages (sum %d)", register, reads, mapped, sum)
	return float64(mapped) / float64(reads)
}

// A read in a registered mapping maps the one page it needs, where an
// unregistered mapping of the same file maps those around it too.
func TestRegisteredMappingFaultsOnePage(t *testing.T) {
	if around := mappedAround(t, false); around < 2 {
		t.Skipf("fault-around maps %.1f pages per read here (vm fault_around_bytes set to one page?): nothing to turn off", around)
	}
	if got := mappedAround(t, true); got != 1 {
		t.Fatalf("a registered mapping maps %.1f pages per read, want 1", got)
	}
}

// The binary's own read-only mappings were registered at start wherever
// the kernel allows it.
func TestBinaryRegisteredAtStart(t *testing.T) {
	fd, ok := open()
	if !ok {
		t.Skip("the kernel refuses userfaultfd with asynchronous write-protection")
	}
	syscall.Close(fd)
	if Registered() < 2 { // code and read-only data at least
		t.Fatalf("Registered() = %d, want the binary's read-only mappings", Registered())
	}
}

func TestParseMapping(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
		want mapping
	}{
		{"00400000-01408000 r-xp 00000000 fd:00 1234   /usr/bin/reasonix", true, mapping{0x400000, 0x1408000, "r-xp", "fd:00", "1234"}},
		{"7f00a000-7f00b000 rw-p 00000000 00:00 0 ", true, mapping{0x7f00a000, 0x7f00b000, "rw-p", "00:00", "0"}},
		{"7ffd1000-7ffd3000 r--p 00000000 00:00 0                          [vvar]", true, mapping{0x7ffd1000, 0x7ffd3000, "r--p", "00:00", "0"}},
		{"00400000-01408000 r-xp 00000000 fd:00 1234 /a path with spaces", true, mapping{0x400000, 0x1408000, "r-xp", "fd:00", "1234"}},
		{"", false, mapping{}},
		{"00400000 r-xp 00000000 fd:00 1234", false, mapping{}},
		{"01408000-00400000 r-xp 00000000 fd:00 1234", false, mapping{}},
		{"0040000g-01408000 r-xp 00000000 fd:00 1234", false, mapping{}},
		{"00400000-01408000 r-xp 00000000 fd:00", false, mapping{}},
		{"00400000-11111111111111111 r-xp 0 fd:00 1", false, mapping{}},
	} {
		got, ok := parseMapping([]byte(c.line))
		if ok != c.ok || got != c.want {
			t.Errorf("parseMapping(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}
