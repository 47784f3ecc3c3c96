#!/bin/bash
# Initialises the cluster on first start (as the official image does), then
# runs postgres as the postgres user (PGPORT, in the environment, is its port).
set -euo pipefail
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
[ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD is not set" >&2; exit 1; }
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
install -d -o postgres -g postgres -m 0700 "$PGDATA"
install -d -o postgres -g postgres -m 2775 /var/run/postgresql
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	pwfile=$(mktemp)
	printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
	chown postgres "$pwfile"
	as_postgres initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" \
		--auth-local=trust --auth-host=scram-sha-256 >/dev/null
	rm -f "$pwfile"
	if [ "$POSTGRES_DB" != postgres ]; then
		as_postgres postgres --single -D "$PGDATA" postgres >/dev/null \
			<<<"CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";"
	fi
fi
if [ "${1:-}" = postgres ]; then
	shift
	exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" "$@"
fi
exec "$@"
