#!/usr/bin/env bash
# Installs and starts what the tests use for real: bubblewrap (the bash
# sandbox), git (workspaces), PostgreSQL (the store and multi-node tests),
# Chromium, node and playwright-core (the dashboard's browser test), the
# official ACP TypeScript SDK (the editor conformance test), gopls (the lsp_*
# tools, with go install),
# systemd-analyze and docker-compose (they check the files in deploy/), from
# Debian's packages. Needs root when something is missing. Sourced by
# scripts/test.sh, so the DSN it exports reaches the tests.
#
# It fails, naming what is missing, rather than carrying on: scripts/test.sh
# tells the tests that these dependencies are promised
# (REASONIX_TEST_REQUIRE), so a run after a failed install would fail in the
# tests anyway, later and less clearly. It never exports a DSN it could not
# connect to.
#
# A Postgres cluster it starts keeps running afterwards (stop it with
# `pg_ctlcluster <version> main stop`). REASONIX_TEST_POSTGRES_DSN, when set,
# names a server to use instead; then none is installed or started.
set -euo pipefail

fail() {
	echo "test-deps: $*" >&2
	exit 1
}

apt_install() {
	if [ "$(id -u)" -ne 0 ]; then
		fail "missing $*; install it (as root: apt-get install $*) or run this as root"
	fi
	echo "test-deps: installing $*"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=300 update -qq || fail "apt-get update failed; cannot install $*"
	apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >/dev/null || fail "apt-get install $* failed"
}

# psql_ok DSN: the server accepts a password login and answers a query.
psql_ok() {
	psql "$1" -qtAc 'SELECT 1' >/dev/null 2>&1
}

default_dsn="postgres://reasonix:reasonix@127.0.0.1:5432/reasonix_test?sslmode=disable"

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v git >/dev/null 2>&1 || need+=(git)
command -v psql >/dev/null 2>&1 || need+=(postgresql-client)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
# The compose file is checked with `docker compose config` or, without the
# plugin, Debian's standalone docker-compose; neither needs a daemon.
{ docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; } || need+=(docker-compose)
# The dashboard's browser test drives Debian's Chromium with playwright-core
# (from npm, below); it never downloads a browser of its own.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
# The server only when there is none to use already.
if [ -z "${REASONIX_TEST_POSTGRES_DSN:-}" ] && ! { command -v psql >/dev/null 2>&1 && psql_ok "$default_dsn"; }; then
	if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
		need+=(postgresql)
	fi
fi
[ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"

command -v bwrap >/dev/null 2>&1 || fail "bwrap is still missing after installing bubblewrap"
command -v git >/dev/null 2>&1 || fail "git is still missing after installing it"
command -v systemd-analyze >/dev/null 2>&1 || fail "systemd-analyze is still missing after installing systemd"
command -v chromium >/dev/null 2>&1 || fail "chromium is still missing after installing it"
# playwright-core at the version package-lock.json pins; it ships no browser.
(cd "$(dirname "${BASH_SOURCE[0]}")/../runner/dashboard/e2e" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
	fail "npm ci in runner/dashboard/e2e failed (playwright-core for the browser test)"
# The official ACP TypeScript SDK at the version acp/conformance pins, for
# the editor conformance test.
(cd "$(dirname "${BASH_SOURCE[0]}")/../acp/conformance" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
	fail "npm ci in acp/conformance failed (@agentclientprotocol/sdk for the ACP conformance test)"
# gopls, the language server the lsp_* tools drive, at a pinned version from
# the Go module proxy; it lands in GOBIN (or GOPATH/bin), which stays on the
# machine, and its modules in the module cache, so a rerun needs no network.
gopls_version=v0.23.0
gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
export PATH="$gobin:$PATH"
if ! gopls version 2>/dev/null | grep -qF "gopls $gopls_version"; then
	echo "test-deps: installing gopls $gopls_version"
	go install "golang.org/x/tools/gopls@$gopls_version" || fail "go install golang.org/x/tools/gopls@$gopls_version failed"
fi
command -v gopls >/dev/null 2>&1 || fail "gopls is still missing after go install (looked in $gobin)"
# An installed bwrap that cannot create its namespaces (a container without
# user namespaces, say) would fail every sandbox test; say so once, here.
if ! out=$(bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all true 2>&1); then
	fail "bwrap is installed but cannot start a sandbox here: $out"
fi

if [ -n "${REASONIX_TEST_POSTGRES_DSN:-}" ]; then
	psql_ok "$REASONIX_TEST_POSTGRES_DSN" ||
		fail "REASONIX_TEST_POSTGRES_DSN is set but that server cannot be reached (psql: $(psql "$REASONIX_TEST_POSTGRES_DSN" -qtAc 'SELECT 1' 2>&1 | head -n1))"
	echo "test-deps: using the Postgres server of REASONIX_TEST_POSTGRES_DSN"
elif psql_ok "$default_dsn"; then
	echo "test-deps: postgres already running (postgres://reasonix:…@127.0.0.1:5432/reasonix_test)"
	export REASONIX_TEST_POSTGRES_DSN="$default_dsn"
else
	# A local cluster on 127.0.0.1:5432 with a password-authenticated role.
	[ "$(id -u)" -eq 0 ] || fail "no test database at 127.0.0.1:5432 and not root to start one; run this as root, or set REASONIX_TEST_POSTGRES_DSN"
	pgver=$(ls /usr/lib/postgresql | sort -V | tail -n1)
	if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$pgver main"; then
		pg_createcluster "$pgver" main >/dev/null || fail "pg_createcluster $pgver main failed"
	fi
	port=$(pg_lsclusters -h | awk -v v="$pgver" '$1==v && $2=="main" {print $3}')
	[ "$port" = 5432 ] || fail "the Postgres $pgver main cluster listens on port $port, not 5432; set REASONIX_TEST_POSTGRES_DSN to use it"
	if ! pg_lsclusters -h | awk -v v="$pgver" '$1==v && $2=="main" {print $4}' | grep -qx online; then
		pg_ctlcluster "$pgver" main start || fail "pg_ctlcluster $pgver main start failed (see /var/log/postgresql/)"
	fi
	# The server finishes starting in the background.
	for _ in $(seq 1 60); do
		pg_isready -q -h 127.0.0.1 -p 5432 && break
		sleep 0.5
	done
	pg_isready -q -h 127.0.0.1 -p 5432 || fail "Postgres $pgver did not accept connections on 127.0.0.1:5432 within 30s (see /var/log/postgresql/)"
	su postgres -c "psql -v ON_ERROR_STOP=1 -qtA" >/dev/null <<'SQL' || fail "could not create the reasonix role and the reasonix_test database"
DO $$ BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reasonix') THEN
		CREATE ROLE reasonix LOGIN PASSWORD 'reasonix';
	END IF;
END $$;
SELECT 'CREATE DATABASE reasonix_test OWNER reasonix'
	WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'reasonix_test')\gexec
SQL
	psql_ok "$default_dsn" || fail "Postgres $pgver is up but refuses the reasonix login to reasonix_test (psql: $(psql "$default_dsn" -qtAc 'SELECT 1' 2>&1 | head -n1))"
	echo "test-deps: postgres $pgver ready (postgres://reasonix:…@127.0.0.1:5432/reasonix_test); it stays running"
	export REASONIX_TEST_POSTGRES_DSN="$default_dsn"
fi
