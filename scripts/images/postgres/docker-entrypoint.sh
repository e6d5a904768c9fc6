#!/bin/bash
# The official image's contract, written for this stand-in: on a first start in an empty PGDATA, make the
# cluster with POSTGRES_USER as its superuser (password POSTGRES_PASSWORD, required) and the database
# POSTGRES_DB; then run the server as postgres, listening on every interface, passwords checked with
# scram-sha-256 for every network client.
set -euo pipefail

if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

user="${POSTGRES_USER:-postgres}"
database="${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set for a new cluster}"
  pwfile="$(mktemp)"
  trap 'rm -f "$pwfile"' EXIT
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 >/dev/null
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  # The first start's own server listens on a socket of its own: pg_isready (the health check, a restore
  # waiting for the server) must not take it for the real one.
  init_socket="$(mktemp -d)"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=$init_socket" -w start >/dev/null
  if [ "$database" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --host "$init_socket" --username "$user" --dbname postgres -c "create database \"$database\"" >/dev/null
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  rmdir "$init_socket"
  echo "PostgreSQL cluster made: superuser $user, database $database"
fi
exec "$@" -c listen_addresses='*'
