//go:build linux && (amd64 || arm64)

package policy

import (
	"bytes"
	"encoding/binary"
	"path"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

const pageSize = 4096

// readMem reads the caller's memory at addr into buf.
func readMem(pid int, addr uint64, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err == nil && n == 0 {
		err = unix.EFAULT
	}
	return n, err
}

// readFull reads exactly len(buf) bytes.
func readFull(pid int, addr uint64, buf []byte) error {
	for len(buf) > 0 {
		n, err := readMem(pid, addr, buf)
		if err != nil {
			return err
		}
		buf, addr = buf[n:], addr+uint64(n)
	}
	return nil
}

// readCString reads a NUL-terminated string of at most max bytes, a page
// at a time (the string may end just before an unmapped page).
func readCString(pid int, addr uint64, max int) (string, error) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	var out []byte
	var buf [pageSize]byte
	for len(out) <= max {
		n, err := readMem(pid, addr, buf[:pageSize-int(addr%pageSize)])
		if err != nil {
			return "", unix.EFAULT
		}
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:n]...)
		addr += uint64(n)
	}
	return "", unix.ENAMETOOLONG
}

// Bounds of an argv the supervisor reads: the kernel's own limit on the
// strings is 32 pages each and a quarter of the stack in all.
const (
	maxArgs     = 1 << 16
	maxArgBytes = 2 << 20
)

// readArgv reads a NULL-terminated array of strings.
func readArgv(pid int, addr uint64) ([]string, error) {
	var argv []string
	total := 0
	var ptrs [pageSize / 8]uint64
	for addr != 0 && len(argv) < maxArgs {
		chunk := (pageSize - int(addr%pageSize)) / 8
		if chunk == 0 {
			chunk = 1
		}
		b := unsafe.Slice((*byte)(unsafe.Pointer(&ptrs[0])), chunk*8)
		if err := readFull(pid, addr, b); err != nil {
			return nil, unix.EFAULT
		}
		for _, p := range ptrs[:chunk] {
			if p == 0 {
				return argv, nil
			}
			s, err := readCString(pid, p, 32*pageSize)
			if err != nil {
				return nil, err
			}
			if total += len(s) + 1; total > maxArgBytes {
				return nil, unix.E2BIG
			}
			argv = append(argv, s)
		}
		addr += uint64(chunk * 8)
	}
	if addr == 0 {
		return nil, nil // argv NULL: Linux runs the file with no arguments
	}
	return nil, unix.E2BIG
}

// dirOf is the absolute path, in pid's view, of the directory a relative
// path of a *at call with dirfd is resolved from.
func dirOf(pid int, dirfd int32) (string, error) {
	link := procPath(pid, "cwd")
	if dirfd != unix.AT_FDCWD {
		if dirfd < 0 {
			return "", unix.EBADF
		}
		link = procPath(pid, "fd/"+strconv.Itoa(int(dirfd)))
	}
	return readlink(link)
}

// fdPath is the path, in pid's view, of pid's open file fd.
func fdPath(pid int, fd int32) (string, error) {
	if fd < 0 {
		return "", unix.EBADF
	}
	return readlink(procPath(pid, "fd/"+strconv.Itoa(int(fd))))
}

func readlink(p string) (string, error) {
	var buf [unix.PathMax]byte
	n, err := unix.Readlink(p, buf[:])
	if err != nil {
		return "", err
	}
	s := string(buf[:n])
	if !strings.HasPrefix(s, "/") {
		return "", unix.EACCES // a pipe, a socket, an unreachable path
	}
	return s, nil
}

// absIn joins a path the caller passed to the directory it is relative to.
func absIn(pid int, dirfd int32, p string) (string, error) {
	if strings.HasPrefix(p, "/") {
		return p, nil
	}
	dir, err := dirOf(pid, dirfd)
	if err != nil {
		return "", err
	}
	return dir + "/" + p, nil
}

// resolvedFile is a path resolved in a process's view: the canonical path
// (no symbolic link, no . or ..) and an O_PATH descriptor of the file that
// was at that path, so what is checked and what is used are one file.
type resolvedFile struct {
	path string
	fd   int
}

func (r resolvedFile) close() { unix.Close(r.fd) }

// resolveIn resolves the absolute path p inside pid's root (its mount
// namespace under bubblewrap) one component at a time, never following a
// link the kernel would not (RESOLVE_IN_ROOT keeps ".." and absolute
// targets inside that root). follow says whether a final symbolic link is
// followed. A component swapped for a link during the walk makes it fail
// (RESOLVE_NO_SYMLINKS) rather than resolve elsewhere.
func resolveIn(pid int, p string, follow bool) (resolvedFile, error) {
	root, err := unix.Open(procPath(pid, "root"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return resolvedFile{}, err
	}
	defer unix.Close(root)
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS}
	cur, last := "/", -1
	defer func() {
		if last >= 0 {
			unix.Close(last)
		}
	}()
	rest := strings.Split(p, "/")
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			if last >= 0 {
				unix.Close(last)
				last = -1
			}
			continue
		}
		next := path.Join(cur, c)
		fd, err := unix.Openat2(root, next, how)
		if err != nil {
			return resolvedFile{}, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return resolvedFile{}, err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK || (len(rest) == 0 && !follow) {
			if last >= 0 {
				unix.Close(last)
			}
			cur, last = next, fd
			continue
		}
		var buf [unix.PathMax]byte
		n, err := unix.Readlinkat(fd, "", buf[:])
		unix.Close(fd)
		if err != nil {
			return resolvedFile{}, err
		}
		if links++; links > maxLinks {
			return resolvedFile{}, unix.ELOOP
		}
		target := string(buf[:n])
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
		if last >= 0 {
			unix.Close(last)
			last = -1
		}
	}
	if last < 0 { // the root itself
		fd, err := unix.Openat2(root, "/", how)
		if err != nil {
			return resolvedFile{}, err
		}
		last = fd
	}
	r := resolvedFile{path: cur, fd: last}
	last = -1
	return r, nil
}

// sockaddrPath reads a sockaddr of addrlen bytes at addr: the path of a
// pathname UNIX socket address, abstract for an abstract one, ok false
// for any other address.
func sockaddrPath(pid int, addr uint64, addrlen uint64) (p string, abstract, ok bool, err error) {
	if addr == 0 || addrlen < 3 {
		return "", false, false, nil // no address, or an unnamed one
	}
	var sa [unix.SizeofSockaddrUnix]byte
	n := min(int(addrlen), len(sa))
	if err := readFull(pid, addr, sa[:n]); err != nil {
		return "", false, false, unix.EFAULT
	}
	if binary.NativeEndian.Uint16(sa[:2]) != unix.AF_UNIX {
		return "", false, false, nil
	}
	if sa[2] == 0 {
		return "", true, true, nil
	}
	name := sa[2:n]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return string(name), false, true, nil
}
