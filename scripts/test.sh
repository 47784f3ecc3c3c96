#!/usr/bin/env bash
# The whole test suite: installs and starts what the tests need (as root,
# from Debian's packages), then vets, runs every test with the race detector,
# and fuzzes each target briefly. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

# Sourced, so the variables it exports (the Postgres DSN) reach the tests. It
# exits non-zero when it cannot provide Postgres, bubblewrap or git.
. ./scripts/test-deps.sh

# test-deps.sh has just provided them, so a test that finds one missing
# fails instead of skipping (internal/testenv reads this).
export REASONIX_TEST_REQUIRE=all

step() {
	echo "== $1 ($(date +%T))"
}

# CGO_ENABLED=0 as the end-to-end tests build the binary and fuzz.sh builds
# its dependencies: the packages vet compiles are then reused by both.
step "go vet"
CGO_ENABLED=0 go vet ./...
# The binary ships for Windows too: keep the non-POSIX paths compiling. The
# objects are thrown away, so the compiler skips optimising and inlining
# (-N -l), which saves about a fifth of this step.
step "windows build"
GOOS=windows GOARCH=amd64 go build -gcflags='all=-N -l' ./...
step "go test -race"
# -vet=off: the full go vet above already checked every package.
# -race also turns on checkptr (the compiler's checks of unsafe.Pointer
# arithmetic) in every package. In modernc.org's SQLite, C translated to Go
# and nearly all pointer arithmetic, those checks took about a fifth of the
# CPU of the store-heavy tests; they check that translator's code, not ours,
# so they are off there. The race detector still covers every package.
go test -race -vet=off -count=1 -timeout 15m -gcflags='modernc.org/...=-d=checkptr=0' ./...
# The Kubernetes manifests are checked by their own module (deploy/k8s/verify),
# so the main module does not carry the Kubernetes dependencies.
step "deploy/k8s/verify"
(cd deploy/k8s/verify && go vet ./... && go test -count=1 ./...)
step "fuzz"
FUZZTIME="${FUZZTIME:-2s}" ./scripts/fuzz.sh
step "done"
