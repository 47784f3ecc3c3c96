#!/usr/bin/env bash
# The whole test suite: installs what the tests need (as root, from Debian's
# packages), then vets, runs every test with the race detector, and fuzzes each
# target briefly. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

# Sourced, so the variables it exports (the Postgres DSN) reach the tests.
. ./scripts/test-deps.sh

go vet ./...
# The binary ships for Windows too: keep the non-POSIX paths compiling.
GOOS=windows GOARCH=amd64 go build ./...
go test -race -count=1 -timeout 15m ./...
FUZZTIME="${FUZZTIME:-3s}" ./scripts/fuzz.sh
