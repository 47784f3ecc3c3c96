//go:build unix

package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on the repository's lock file,
// waiting (with ctx) while another process holds it; the release closes
// the file, which drops the lock. A process that dies drops it too.
func lockFile(ctx context.Context, repo string) (func(), error) {
	f, err := os.OpenFile(repoLockPath(repo), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("workspace: open the lock of repository %s: %w", repo, err)
	}
	// flock cannot wait with a context: try, and wait a little longer
	// each time (the holders' critical sections are a few git commands).
	wait := 2 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("workspace: lock repository %s: %w", repo, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			_ = f.Close()
			return nil, fmt.Errorf("workspace: waiting for repository %s: %w", repo, ctx.Err())
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}
