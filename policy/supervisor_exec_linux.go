//go:build linux && (amd64 || arm64)

package policy

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// onExec matches an execve/execveat against the deny rules. The names the
// matcher sees: the file's name as called, its name after symbolic links,
// and — for a file the size of a denied binary found on PATH — the denied
// binary's name when the content is the same (a copy of rm is rm). The
// check is on the file the path names when the call arrives; the kernel
// then resolves the path again (SECCOMP_USER_NOTIF_FLAG_CONTINUE), so a
// racing process that swaps the file or the argv memory in between can
// still run something else: exec-time matching narrows, it does not seal.
func (s *supervisor) onExec(rc syscall.RawConn, n *seccompNotif) verdict {
	pid, a := int(n.Pid), n.Data.Args
	dirfd, pathp, argvp, flags := int32(unix.AT_FDCWD), a[0], a[1], uint64(0)
	if n.Data.Nr == unix.SYS_EXECVEAT {
		dirfd, pathp, argvp, flags = int32(a[0]), a[1], a[2], a[4]
	}
	p, err := readCString(pid, pathp, unix.PathMax)
	if err != nil {
		return refuse(errnoOf(err, unix.EFAULT))
	}
	argv, err := readArgv(pid, argvp)
	if err != nil {
		return refuse(errnoOf(err, unix.EFAULT))
	}
	var f resolvedFile
	if p == "" && flags&unix.AT_EMPTY_PATH != 0 {
		fd, err := unix.Open(procPath(pid, "fd/"+strconv.Itoa(int(dirfd))), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return refuse(unix.EBADF)
		}
		f = resolvedFile{fd: fd}
		f.path, _ = readlink("/proc/self/fd/" + strconv.Itoa(fd))
	} else {
		abs, err := absIn(pid, dirfd, p)
		if err != nil {
			return refuse(errnoOf(err, unix.ENOENT))
		}
		if f, err = resolveIn(pid, abs, flags&unix.AT_SYMLINK_NOFOLLOW == 0); err != nil {
			return refuse(errnoOf(err, unix.ENOENT))
		}
	}
	defer f.close()
	names := []string{filepath.Base(p), filepath.Base(f.path)}
	id := s.ids.identify(f.fd)
	if !valid(rc, n.ID) {
		return verdict{drop: true}
	}
	if id == serviceBinary {
		// The proxy lets a process running this binary exec unchecked
		// (the spawner's vfork child): none other may exist in the sandbox.
		s.record(pid, shownCommand(filepath.Base(p), argv)+": refused by the sandbox (the service's own executable does not run inside it)")
		return refuse(unix.EPERM)
	}
	if id != "" {
		names = append(names, id)
	}
	seen := names[:0]
	for _, name := range names {
		if name == "" || name == "." || name == "/" || slices.Contains(seen, name) {
			continue
		}
		seen = append(seen, name)
		if rule, denied := s.cfg.execDenied(name, argv); denied {
			s.record(pid, fmt.Sprintf("%s: refused by deny rule %s at exec", shownCommand(name, argv), rule))
			return refuse(unix.EPERM)
		}
	}
	return allowCall
}

// shownCommand is a short form of an exec for a refusal message.
func shownCommand(name string, argv []string) string {
	parts := []string{name}
	if len(argv) > 1 {
		parts = append(parts, argv[1:min(len(argv), 4)]...)
	}
	s := strings.Join(parts, " ")
	if len(argv) > 4 {
		s += " …"
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// fileKey identifies a file's content while it is unchanged.
type fileKey struct {
	dev, ino  uint64
	mtime, sz int64
	mtimeNsec int64
}

func keyOf(st *unix.Stat_t) fileKey {
	return fileKey{dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Sec, mtimeNsec: st.Mtim.Nsec, sz: st.Size}
}

// denyBinary is a binary on PATH that a deny rule names.
type denyBinary struct {
	name string
	path string
	key  fileKey
	once sync.Once
	sum  [sha256.Size]byte
	err  error
}

func (d *denyBinary) digest() ([sha256.Size]byte, error) {
	d.once.Do(func() { d.sum, d.err = hashFile(d.path) })
	return d.sum, d.err
}

// execIndex identifies executed files by content: the denied binaries by
// size (a stat), then by SHA-256 only when a size matches; answers are
// cached by device, inode, mtime and size.
type execIndex struct {
	bySize map[int64][]*denyBinary

	mu    sync.Mutex
	cache map[fileKey]string
}

// serviceBinary is what identify calls this process's own executable (or
// a copy of it).
const serviceBinary = "\x00service"

// maxIdentityCache bounds the identity cache; it starts over when full.
const maxIdentityCache = 4096

// newExecIndex finds the binaries named names on PATH and in the usual
// system directories.
func newExecIndex(names []string) *execIndex {
	x := &execIndex{bySize: map[int64][]*denyBinary{}, cache: map[fileKey]string{}}
	dirs := append(filepath.SplitList(os.Getenv("PATH")), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
	seen := map[fileKey]bool{}
	var st unix.Stat_t
	if unix.Stat("/proc/self/exe", &st) == nil {
		k := keyOf(&st)
		seen[k] = true
		x.bySize[st.Size] = append(x.bySize[st.Size], &denyBinary{name: serviceBinary, path: "/proc/self/exe", key: k})
	}
	for _, name := range names {
		if name == "" || strings.ContainsRune(name, '/') {
			continue
		}
		for _, dir := range dirs {
			if !filepath.IsAbs(dir) {
				continue
			}
			p := filepath.Join(dir, name)
			if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 || st.Size == 0 {
				continue
			}
			k := keyOf(&st)
			if seen[k] {
				continue
			}
			seen[k] = true
			// A binary reached under another name (a multi-call binary
			// like busybox) is that name only through the link, not by
			// content: every applet shares its content.
			if real, err := filepath.EvalSymlinks(p); err != nil || filepath.Base(real) != name {
				continue
			}
			x.bySize[st.Size] = append(x.bySize[st.Size], &denyBinary{name: name, path: p, key: k})
		}
	}
	return x
}

// identify returns the name of the denied binary whose content the file
// open at fd (O_PATH) has, or "".
func (x *execIndex) identify(fd int) string {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ""
	}
	cands := x.bySize[st.Size]
	if len(cands) == 0 {
		return ""
	}
	k := keyOf(&st)
	for _, d := range cands {
		if d.key == k {
			return d.name
		}
	}
	x.mu.Lock()
	name, ok := x.cache[k]
	x.mu.Unlock()
	if ok {
		return name
	}
	sum, err := hashFile("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return ""
	}
	for _, d := range cands {
		if ds, err := d.digest(); err == nil && ds == sum {
			name = d.name
			break
		}
	}
	x.mu.Lock()
	if len(x.cache) >= maxIdentityCache {
		clear(x.cache)
	}
	x.cache[k] = name
	x.mu.Unlock()
	return name
}

func hashFile(p string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(p)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
