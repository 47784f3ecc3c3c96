//go:build linux

package policy

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// BenchmarkLandlockThreadStart is what starting one task's sandbox thread
// costs: restricting a fresh thread with the shared read layer and the
// task's write layer (layered), against building the whole ruleset for
// the task as the thread did before (one-ruleset). The hidden paths are a
// service's kind: files of a data dir in a directory of its own, a few in
// the home directory and /etc/shadow. Run it as
//
//	go test ./policy -run '^$' -bench LandlockThreadStart -count 5
func BenchmarkLandlockThreadStart(b *testing.B) {
	if err := landlockUsable(false); err != nil {
		b.Skip(err)
	}
	data := filepath.Join(b.TempDir(), "data")
	ws := filepath.Join(data, "scratch", "t1")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	s := execSpec{dir: ws, tmp: b.TempDir(), rw: []string{ws}, hide: []string{
		filepath.Join(data, "api-token"), filepath.Join(data, "reasonix.db"), filepath.Join(data, "transcripts"),
		filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), filepath.Join(home, ".netrc"), "/etc/shadow"}}
	onThread := func(b *testing.B, restrict func() error) {
		done := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			done <- restrict()
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.Run("layered", func(b *testing.B) {
		for b.Loop() {
			onThread(b, func() error { return restrictThread(s) })
		}
	})
	b.Run("one-ruleset", func(b *testing.B) {
		for b.Loop() {
			onThread(b, func() error {
				fd, flags, err := landlock.V10.BestEffort().NewRulesetFD(landlockRules(s)...)
				if err != nil {
					return err
				}
				defer unix.Close(fd)
				if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
					return err
				}
				return ll.LandlockRestrictSelf(fd, flags)
			})
		}
	})
}
