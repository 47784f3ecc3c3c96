//go:build linux && (amd64 || arm64)

package faultaround

import (
	"syscall"
	"unsafe"
)

// The userfaultfd ABI (linux/userfaultfd.h).
const (
	uffdUserModeOnly   = 1          // only faults in user mode: what an unprivileged process may ask for
	uffdAPI            = 0xAA       // UFFD_API
	uffdFeatureWPAsync = 1 << 15    // UFFD_FEATURE_WP_ASYNC
	uffdioAPI          = 0xC018AA3F // _IOWR(0xAA, 0x3F, struct uffdio_api)
	uffdioRegister     = 0xC020AA00 // _IOWR(0xAA, 0x00, struct uffdio_register)
	uffdRegisterWP     = 1 << 1     // UFFDIO_REGISTER_MODE_WP
)

// This package imports only syscall and unsafe, so that it initialises
// before the packages whose initialisation touches most of the binary
// (see the package doc); its own work is a few system calls.
func register() int {
	maps, ok := readMaps()
	if !ok {
		return 0
	}
	// The binary's mappings are those of the file that holds this
	// package's code.
	code := codeAddr()
	var dev, inode string
	for _, m := range maps {
		if m.start <= code && code < m.end {
			dev, inode = m.dev, m.inode
		}
	}
	if inode == "" || inode == "0" {
		return 0
	}
	fd, ok := open()
	if !ok {
		return 0
	}
	n := 0
	for _, m := range maps {
		// Read-only mappings only: code, read-only data, and (cgo)
		// relocated read-only data. The writable data is left alone:
		// it is small, and its pages become the process's own when
		// written.
		if m.dev != dev || m.inode != inode || m.perms[1] == 'w' {
			continue
		}
		if registerRange(fd, m.start, m.end-m.start) {
			n++
		}
	}
	if n == 0 {
		syscall.Close(fd)
	}
	return n
}

// open returns a userfaultfd descriptor with asynchronous write-protection,
// or false where the kernel refuses one.
func open() (int, bool) {
	fd, _, errno := syscall.RawSyscall(sysUserfaultfd, uintptr(syscall.O_CLOEXEC|syscall.O_NONBLOCK|uffdUserModeOnly), 0, 0)
	if errno != 0 {
		return -1, false
	}
	api := struct{ api, features, ioctls uint64 }{api: uffdAPI, features: uffdFeatureWPAsync}
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uffdioAPI, uintptr(unsafe.Pointer(&api))); errno != 0 {
		syscall.Close(int(fd))
		return -1, false
	}
	return int(fd), true
}

// registerRange registers [start, start+n) on fd for write-protection,
// which is what turns fault-around off there.
func registerRange(fd int, start, n uintptr) bool {
	reg := struct{ start, len, mode, ioctls uint64 }{start: uint64(start), len: uint64(n), mode: uffdRegisterWP}
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), uffdioRegister, uintptr(unsafe.Pointer(&reg)))
	return errno == 0
}

// codeAddr is an address in this package's code.
func codeAddr() uintptr {
	f := codeAddr
	return **(**uintptr)(unsafe.Pointer(&f))
}

type mapping struct {
	start, end        uintptr
	perms, dev, inode string
}

// readMaps parses /proc/self/maps with nothing but system calls.
func readMaps() ([]mapping, bool) {
	fd, err := syscall.Open("/proc/self/maps", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var buf []byte
	chunk := make([]byte, 16<<10)
	for {
		n, err := syscall.Read(fd, chunk)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if n == 0 {
			break
		}
		buf = append(buf, chunk[:n]...)
	}
	var maps []mapping
	for len(buf) > 0 {
		line := buf
		if i := indexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		if m, ok := parseMapping(line); ok {
			maps = append(maps, m)
		}
	}
	return maps, true
}

// parseMapping reads "start-end perms offset dev inode [path]".
func parseMapping(line []byte) (mapping, bool) {
	var f [5]string
	for i := range f {
		for len(line) > 0 && line[0] == ' ' {
			line = line[1:]
		}
		j := indexByte(line, ' ')
		if j < 0 {
			j = len(line)
		}
		f[i], line = string(line[:j]), line[j:]
	}
	dash := indexByte([]byte(f[0]), '-')
	if dash < 0 || len(f[1]) != 4 || f[4] == "" {
		return mapping{}, false
	}
	start, ok1 := parseHex(f[0][:dash])
	end, ok2 := parseHex(f[0][dash+1:])
	if !ok1 || !ok2 || end <= start {
		return mapping{}, false
	}
	return mapping{start: start, end: end, perms: f[1], dev: f[3], inode: f[4]}, true
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func parseHex(s string) (uintptr, bool) {
	if s == "" || len(s) > 16 {
		return 0, false
	}
	var v uintptr
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
