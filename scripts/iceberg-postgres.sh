#!/usr/bin/env bash
# PostgreSQL (Debian's package) for the Iceberg SQL-catalog tests.
#   iceberg-postgres.sh start DIR PORT [DB...]  initdb DIR if needed, start on 127.0.0.1:PORT (trust auth, user
#                                              postgres), create each database DB that does not exist yet
#   iceberg-postgres.sh createdb PORT DB...      create each database DB on 127.0.0.1:PORT that does not exist yet
#   iceberg-postgres.sh stop DIR         fast shutdown
# Installs the postgresql package when no server binaries are present (fresh CI machine).
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?data dir or port}
pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
PGBIN=$(pgbin)
if [ -z "$PGBIN" ]; then
  export DEBIAN_FRONTEND=noninteractive
  (apt-get install -y -q postgresql || { apt-get update -q && apt-get install -y -q postgresql; }) >&2
  PGBIN=$(pgbin)
fi
run() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
# createdb PORT DB...: each one that is missing
createdb() {
  local port=$1 db; shift
  for db in "$@"; do
    if [ -z "$("$PGBIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '${db//\'/\'\'}'")" ]; then
      "$PGBIN/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"
    fi
  done
}
case "$cmd" in
createdb)
  shift 2
  createdb "$dir" "$@"
  ;;
start)
  port=${3:?port}
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd) # the server resolves a relative socket directory from inside its data directory
  if [ ! -f "$dir/PG_VERSION" ]; then
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    chmod 700 "$dir"
    run "$PGBIN/initdb" -D "$dir" -A trust -U postgres >/dev/null
  fi
  run "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off" start >&2
  shift 3
  createdb "$port" "$@"
  ;;
stop)
  run "$PGBIN/pg_ctl" -D "$dir" -m fast -w -t 60 stop >&2 || true
  ;;
*) echo "usage: $0 start DIR PORT [DB...] | createdb PORT DB... | stop DIR" >&2; exit 2 ;;
esac
