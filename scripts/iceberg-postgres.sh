#!/usr/bin/env bash
# PostgreSQL (Debian's package) for the Iceberg SQL-catalog tests.
#   iceberg-postgres.sh start DIR PORT   initdb DIR if needed, start on 127.0.0.1:PORT (trust auth)
#   iceberg-postgres.sh stop DIR         fast shutdown
# Installs the postgresql package when no server binaries are present (fresh CI machine).
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?data dir}
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
case "$cmd" in
start)
  port=${3:?port}
  if [ ! -f "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    chmod 700 "$dir"
    run "$PGBIN/initdb" -D "$dir" -A trust -U postgres >/dev/null
  fi
  run "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off" start >&2
  ;;
stop)
  run "$PGBIN/pg_ctl" -D "$dir" -m fast -w -t 60 stop >&2 || true
  ;;
*) echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
