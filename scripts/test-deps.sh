#!/usr/bin/env bash
# Installs the system packages the tests use for real: bubblewrap (the bash
# sandbox) and git (workspaces). Needs root when something is missing.
set -euo pipefail

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v git >/dev/null 2>&1 || need+=(git)

if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "test-deps: missing ${need[*]}; install them (as root: apt-get install ${need[*]})" >&2
		exit 1
	fi
	echo "test-deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Postgres for the store and multi-node tests: a local cluster on 127.0.0.1
# with a password-authenticated role. The tests find it through
# REASONIX_TEST_POSTGRES_DSN or, since this script runs in its own process,
# through the same well-known default DSN.
if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "test-deps: missing postgresql; install it (as root: apt-get install postgresql)" >&2
		exit 1
	fi
	echo "test-deps: installing postgresql"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq postgresql >/dev/null
fi

if [ "$(id -u)" -eq 0 ]; then
	pgver=$(ls /usr/lib/postgresql | sort -V | tail -n1)
	if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$pgver main"; then
		pg_createcluster "$pgver" main >/dev/null
	fi
	if ! pg_lsclusters -h | awk -v v="$pgver" '$1==v && $2=="main" {print $4}' | grep -qx online; then
		pg_ctlcluster "$pgver" main start
	fi
	# Wait for the server to accept connections (it starts in the background).
	for _ in $(seq 1 30); do
		su postgres -c "psql -qtAc 'SELECT 1'" >/dev/null 2>&1 && break
		sleep 1
	done
	su postgres -c "psql -v ON_ERROR_STOP=1 -qtA" >/dev/null <<'SQL'
DO $$ BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reasonix') THEN
		CREATE ROLE reasonix LOGIN PASSWORD 'reasonix';
	END IF;
END $$;
SELECT 'CREATE DATABASE reasonix_test OWNER reasonix'
	WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'reasonix_test')\gexec
SQL
	echo "test-deps: postgres $pgver ready (postgres://reasonix:…@127.0.0.1:5432/reasonix_test)"
fi
export REASONIX_TEST_POSTGRES_DSN="${REASONIX_TEST_POSTGRES_DSN:-postgres://reasonix:reasonix@127.0.0.1:5432/reasonix_test?sslmode=disable}"
