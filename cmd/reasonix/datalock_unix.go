//go:build !windows

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir takes an exclusive lock on <dataDir>/serve.lock for the life
// of the process. Two services on one data dir would share a node id and
// each would take the other's running tasks for its own crashed ones; nodes
// that share a Postgres store each need their own data dir.
func lockDataDir(dataDir string) (release func(), err error) {
	path := filepath.Join(dataDir, "serve.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &configError{fmt.Errorf("another reasonix serve is using %s; give each service its own data directory ([store] path or REASONIX_HOME)", dataDir)}
		}
		return nil, fmt.Errorf("locking the data directory: %w", err)
	}
	return func() { f.Close() }, nil
}
