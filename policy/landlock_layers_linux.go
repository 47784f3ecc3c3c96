//go:build linux

package policy

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// A spawner thread restricts itself in two Landlock layers, each handling
// its own rights; what a process may do is what every layer allows:
//
//   - the read layer handles reading and executing and grants them on
//     everything but the hidden paths and the shared tmp (readCover). It
//     depends only on the hidden paths (and on writable roots inside the
//     shared tmp, which a service's workspaces are not), so one ruleset
//     serves every sandbox of the process that hides the same ones —
//     every task of a service — for as long as the directories
//     it had to list entry by entry (the ancestors of hidden paths, whose
//     other entries are granted one by one) have not changed;
//   - the write layer handles every other right (writing, removing,
//     linking, truncating, device ioctls, the network, the scopes) and
//     grants writing in the task's own roots: a few rules.
//
// The one-layer ruleset the sandbox-exec helper applies (landlockRules)
// grants exactly the same. Building the read rules is the cost of a
// sandbox (about 1.4 ms with a dozen hidden paths in quiet directories,
// 4 ms when one of them sits among the 390 entries of a shared /tmp),
// paid now once per service instead of once per task.
const readRights = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir)

// readLayer is a built read ruleset and the cover it was built from.
type readLayer struct {
	fd    int
	flags uint32
	cover cover
}

// readLayers holds the read rulesets by hidden-path set. A service has one;
// tests make many, so the oldest goes past maxReadLayers.
var readLayers struct {
	mu    sync.Mutex
	byKey map[string]*readLayer
	order []string
}

const maxReadLayers = 8

// restrictReads adds the read layer for hide to the calling thread's
// Landlock domain, building it when it is missing or out of date. The
// lock is held while the layer is applied, so a replaced ruleset is never
// closed under another thread's feet.
func restrictReads(hide, keep []string) error {
	key := strings.Join(hide, "\x00")
	if len(keep) > 0 {
		key += "\x01" + strings.Join(keep, "\x00")
	}
	readLayers.mu.Lock()
	defer readLayers.mu.Unlock()
	l := readLayers.byKey[key]
	if l == nil || !l.cover.current() {
		fresh, err := buildReadLayer(hide, keep)
		if err != nil {
			return err
		}
		if l != nil {
			unix.Close(l.fd)
		} else {
			readLayers.order = append(readLayers.order, key)
		}
		if readLayers.byKey == nil {
			readLayers.byKey = map[string]*readLayer{}
		}
		readLayers.byKey[key], l = fresh, fresh
		if len(readLayers.order) > maxReadLayers {
			old := readLayers.order[0]
			readLayers.order = readLayers.order[1:]
			unix.Close(readLayers.byKey[old].fd)
			delete(readLayers.byKey, old)
		}
	}
	if err := ll.LandlockRestrictSelf(l.fd, l.flags); err != nil {
		return fmt.Errorf("applying Landlock's read layer: %w", err)
	}
	return nil
}

func buildReadLayer(hide, keep []string) (*readLayer, error) {
	c := readCover(hide, keep)
	cfg := landlock.V10
	cfg.HandledAccessFS &= readRights
	cfg.HandledAccessNet, cfg.Scoped = 0, 0
	fd, flags, err := cfg.BestEffort().NewRulesetFD(readRules(c)...)
	if err != nil {
		return nil, fmt.Errorf("building Landlock's read layer: %w", err)
	}
	if fd < 0 {
		return nil, errors.New("the kernel does not offer Landlock")
	}
	return &readLayer{fd: fd, flags: flags, cover: c}, nil
}

// restrictWrites adds the write layer of s to the calling thread's domain.
func restrictWrites(s execSpec) error {
	cfg := landlock.V10
	cfg.HandledAccessFS &^= readRights
	if s.network {
		cfg.HandledAccessNet = 0
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(writeRules(s)...)
	if err != nil {
		return fmt.Errorf("building Landlock's write layer: %w", err)
	}
	if fd < 0 {
		return errors.New("the kernel does not offer Landlock")
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("applying Landlock's write layer: %w", err)
	}
	return nil
}
