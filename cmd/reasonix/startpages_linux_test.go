package main

import (
	"os"
	"testing"
)

// releaseStartPages takes the binary's read-only pages out of the
// process's RSS, and what runs afterwards faults back only what it needs:
// here the test binary, whose initialisation and test framework touched
// megabytes of them.
func TestReleaseStartPagesShrinksFileRSS(t *testing.T) {
	before := statusKB(os.Getpid(), "RssFile:")
	if before == 0 {
		t.Skip("no RssFile in /proc/self/status")
	}
	releaseStartPages()
	after := statusKB(os.Getpid(), "RssFile:")
	t.Logf("RssFile %d kB -> %d kB", before, after)
	if after >= before/2 {
		t.Fatalf("RssFile %d kB -> %d kB: the binary's pages were not released", before, after)
	}
	// The writable data kept what was written: a package-level variable
	// set at start is still set.
	if binary == "" {
		t.Fatal("a package-level variable lost its value")
	}
}
