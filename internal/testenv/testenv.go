// Package testenv decides what a test does when a system dependency it runs
// for real is missing: Postgres, bubblewrap, git, or the tools that check
// the deployment files (systemd-analyze, docker-compose). On a developer's machine
// the test is skipped, so `go test ./...` works anywhere; where the
// environment promises the dependency (CI, `make test`) the test fails, so a
// broken install cannot turn into a green run that tested nothing.
//
// The promise is read from the environment:
//
//   - REASONIX_TEST_REQUIRE: a comma-separated list of the dependencies that
//     must be present (postgres, bwrap, git, systemd, compose, chromium, acp-client, gopls), or "all". scripts/test.sh sets
//     it to all after scripts/test-deps.sh installed and started them.
//   - CI: any value but "", "0" or "false" requires all of them, for CI
//     systems that run `go test` without the scripts.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The dependencies a test may require, as named in REASONIX_TEST_REQUIRE.
const (
	Postgres = "postgres"
	Bwrap    = "bwrap"
	Git      = "git"
	Systemd  = "systemd" // systemd-analyze
	Compose  = "compose" // docker-compose, or docker with the compose plugin
	// Chromium is the dashboard's browser test: Debian's chromium, node,
	// and playwright-core installed by `npm ci` in runner/dashboard/e2e.
	Chromium = "chromium"
	// ACPClient is the editor conformance test: node and the official ACP
	// TypeScript SDK installed by `npm ci` in acp/conformance.
	ACPClient = "acp-client"
	// Gopls is the language server the lsp_* tools drive, installed by
	// `go install` in scripts/test-deps.sh.
	Gopls = "gopls"
)

var known = []string{Postgres, Bwrap, Git, Systemd, Compose, Chromium, ACPClient, Gopls}

// Required reports whether the environment promises dep. It panics on a name
// not listed above (a typo in a test).
func Required(dep string) bool {
	if !slices.Contains(known, dep) {
		panic(fmt.Sprintf("testenv: unknown dependency %q (known: %s)", dep, strings.Join(known, ", ")))
	}
	switch strings.ToLower(os.Getenv("CI")) {
	case "", "0", "false":
	default:
		return true
	}
	for _, r := range strings.Split(os.Getenv("REASONIX_TEST_REQUIRE"), ",") {
		if r = strings.TrimSpace(r); r == dep || r == "all" {
			return true
		}
	}
	return false
}

// Missing ends the test for want of dep, because of why: a skip, or a
// failure when the environment promises dep. It also fails the test when
// REASONIX_TEST_REQUIRE names something unknown, which would otherwise
// quietly require nothing.
func Missing(t testing.TB, dep string, why any) {
	t.Helper()
	for _, r := range strings.Split(os.Getenv("REASONIX_TEST_REQUIRE"), ",") {
		if r = strings.TrimSpace(r); r != "" && r != "all" && !slices.Contains(known, r) {
			t.Fatalf("testenv: REASONIX_TEST_REQUIRE names %q; known: all, %s", r, strings.Join(known, ", "))
		}
	}
	if Required(dep) {
		t.Fatalf("%s is required here but unavailable (scripts/test-deps.sh installs and starts it): %v", dep, why)
	}
	t.Skipf("%s unavailable, skipping (scripts/test-deps.sh installs it; REASONIX_TEST_REQUIRE=%s turns this skip into a failure): %v", dep, dep, why)
}

// LookPath returns the path of the executable dep (bwrap, git), or ends the
// test through Missing when it is not installed.
func LookPath(t testing.TB, dep string) string {
	t.Helper()
	path, err := exec.LookPath(dep)
	if err != nil {
		Missing(t, dep, err)
	}
	return path
}
