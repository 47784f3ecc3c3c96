//go:build linux

package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// devices stay writable: shells redirect to them all the time. /dev/tty
// gets no ioctl right, so nothing can push input into a terminal.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// landlockRules grants reading everywhere but the hidden paths, and
// writing in the writable roots (minus hidden paths), the private tmp and
// the devices: readRules and writeRules in one ruleset (the one-layer
// form, which BenchmarkLandlockLayers compares the thread's two layers with).
func landlockRules(s execSpec) []landlock.Rule {
	return append(readRules(readCover(s.hide, tmpRoots(append(slices.Clip(s.rw), s.tmp)))), writeRules(s)...)
}

// The system's shared temporary directory (/tmp) is not readable in the
// sandbox: other tasks' and tools' files there are neither listed nor
// read. Since a grant to list a directory covers all beneath it, the
// directories above the tmp (/) cannot be listed either. Each sandbox's private tmp lives in a directory of this service's
// own beneath it (tmpBase), which stays readable, as do writable roots
// that happen to lie in /tmp.

// sharedTmp is the system's temporary directory, resolved; "" when it
// cannot be hidden.
var sharedTmp = sync.OnceValue(func() string {
	d, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil || d == "/" || !filepath.IsAbs(d) {
		return ""
	}
	return d
})

// tmpBase is where private tmps are made: <tmp>/reasonix-sandbox-<uid>,
// mode 0700, or a fresh directory when that name is taken by something
// else (another user could have made it).
var tmpBase = sync.OnceValue(func() string {
	dir := filepath.Join(os.TempDir(), "reasonix-sandbox-"+strconv.Itoa(os.Getuid()))
	_ = os.Mkdir(dir, 0o700)
	var st unix.Stat_t
	if unix.Lstat(dir, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mode&0o777 == 0o700 && int(st.Uid) == os.Getuid() {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return r
		}
	}
	if d, err := os.MkdirTemp("", "reasonix-sandbox-"); err == nil {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return r
		}
	}
	return ""
})

// tmpParent is where privateTmp makes a sandbox's tmp ("" = os.TempDir()).
func tmpParent() string { return tmpBase() }

// tmpRoots are the paths among roots that lie in the shared tmp, and for
// a worktree's private git directory there (gitShared:
// <common>/worktrees/<name>) the repository's shared git directory, which
// the task's git reads.
func tmpRoots(roots []string) []string {
	tmp := sharedTmp()
	if tmp == "" {
		return nil
	}
	var in []string
	for _, r := range roots {
		if r == "" || within(r, tmpBase()) {
			continue
		}
		if within(r, tmp) {
			in = append(in, r)
		}
		if filepath.Base(filepath.Dir(r)) == "worktrees" {
			if common := filepath.Dir(filepath.Dir(r)); within(common, tmp) && !slices.Contains(in, common) {
				in = append(in, common)
			}
		}
	}
	return in
}

// readCover is the cover of / minus hide and minus the shared tmp, plus
// tmpBase and keep (paths in the shared tmp) minus hide.
func readCover(hide, keep []string) cover {
	tmp := sharedTmp()
	if tmp == "" {
		return coverOf("/", hide)
	}
	c := coverOf("/", append(slices.Clip(hide), tmp))
	// Listing / (or any directory above the tmp) would list the tmp too.
	for _, w := range c.walked {
		if within(tmp, w) {
			c.unlisted = append(c.unlisted, w)
		}
	}
	if base := tmpBase(); base != "" && within(base, tmp) {
		keep = append(slices.Clip(keep), base)
	}
	for _, k := range keep {
		k := coverOf(k, hide)
		c.dirs = append(c.dirs, k.dirs...)
		c.files = append(c.files, k.files...)
		c.walked = append(c.walked, k.walked...)
		c.stamps = append(c.stamps, k.stamps...)
	}
	return c
}

// readRules grants reading the cover of / minus the hidden paths.
func readRules(read cover) []landlock.Rule {
	return []landlock.Rule{
		// A listed entry may vanish before its rule is added.
		landlock.RODirs(read.dirs...).IgnoreIfMissing(),
		landlock.ROFiles(read.files...).IgnoreIfMissing(),
		landlock.PathAccess(ll.AccessFSReadDir, read.listed()...).IgnoreIfMissing(),
	}
}

// writeRules grants writing (and reading) in the writable roots minus the
// hidden paths, the private tmp and the devices above.
func writeRules(s execSpec) []landlock.Rule {
	rules := []landlock.Rule{landlock.RWFiles(devices...).IgnoreIfMissing()}
	rw := s.rw
	if s.tmp != "" {
		rw = append(slices.Clip(rw), s.tmp)
	}
	for _, root := range rw {
		if _, err := os.Stat(root); err != nil {
			continue // nothing to write into yet
		}
		w := coverOf(root, s.hide)
		rules = append(rules,
			landlock.RWDirs(w.dirs...).WithRefer().IgnoreIfMissing(),
			landlock.RWFiles(w.files...).IgnoreIfMissing(),
		)
	}
	return rules
}
