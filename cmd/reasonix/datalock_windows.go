//go:build windows

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// lockDataDir keeps a second service off the data dir: on Windows an open
// file with O_EXCL semantics stands in for flock, and a stale lock file
// left by a crash must be removed by hand (the message says where).
func lockDataDir(dataDir string) (release func(), err error) {
	path := filepath.Join(dataDir, "serve.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, &configError{fmt.Errorf("another reasonix serve is using %s (or a crash left %s behind; remove it)", dataDir, path)}
	}
	if err != nil {
		return nil, fmt.Errorf("locking the data directory: %w", err)
	}
	return func() { f.Close(); os.Remove(path) }, nil
}
