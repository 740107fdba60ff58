#!/usr/bin/env bash
# Trino's server (io.trino:trino-server from Maven Central) on loopback, to read the Iceberg sink's tables.
#   trino.sh fetch                        download and unpack the server and the CLI (cached); print the install dir
#   trino.sh java                         print the home of a JDK 24 or later (Trino >= 476 needs one)
#   trino.sh start DIR PORT CATALOG...    start one coordinator-worker on 127.0.0.1:PORT with state in DIR and the
#                                         given catalog files (name.properties -> catalog "name"); wait until ready
#   trino.sh stop DIR                     stop the server started in DIR (by its pid file)
#   trino.sh cli ARGS...                  Trino's CLI (e.g. --server http://127.0.0.1:PORT --execute 'SELECT 1')
# Everything is fetched from Maven Central into ~/.cache/connectd/trino-VERSION. TRINO_HEAP sets -Xmx (1g);
# TRINO_PLUGINS (default: iceberg) the plugins loaded at start, all of them take minutes on a small machine.
# The JDK: TRINO_JAVA_HOME, else JAVA_HOME, else the newest /usr/lib/jvm/* that is 24 or later.
set -euo pipefail
TRINO_VERSION=${TRINO_VERSION:-476}
MAVEN=https://repo1.maven.org/maven2/io/trino
CACHE="$HOME/.cache/connectd/trino-$TRINO_VERSION"
SERVER="$CACHE/trino-server-$TRINO_VERSION"
CLI="$CACHE/trino-cli-$TRINO_VERSION-executable.jar"

# get URL FILE: download with Maven Central's SHA-1 checked
get() {
  local url=$1 out=$2 want got
  curl -fsSL --retry 3 -o "$out.part" "$url"
  want=$(curl -fsSL --retry 3 "$url.sha1" | cut -c1-40)
  got=$(sha1sum "$out.part" | cut -d' ' -f1)
  [ "$want" = "$got" ] || { echo "trino.sh: $url: SHA-1 $got, Maven Central says $want" >&2; rm -f "$out.part"; exit 1; }
  mv "$out.part" "$out"
}

fetch() {
  [ -f "$SERVER/.complete" ] && [ -f "$CLI" ] && return
  mkdir -p "$CACHE"
  exec 9>"$CACHE.lock"
  flock 9
  if [ ! -f "$SERVER/.complete" ]; then
    local tgz="$CACHE/trino-server-$TRINO_VERSION.tar.gz"
    [ -f "$tgz" ] || { echo "trino.sh: fetching trino-server $TRINO_VERSION (~820 MB) from Maven Central" >&2; get "$MAVEN/trino-server/$TRINO_VERSION/trino-server-$TRINO_VERSION.tar.gz" "$tgz"; }
    rm -rf "$SERVER"
    tar xzf "$tgz" -C "$CACHE"
    rm -f "$tgz"
    touch "$SERVER/.complete"
  fi
  [ -f "$CLI" ] || get "$MAVEN/trino-cli/$TRINO_VERSION/trino-cli-$TRINO_VERSION-executable.jar" "$CLI"
  flock -u 9
}

# major JAVA_HOME: the JDK's feature version
major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }

java_home() {
  local c
  for c in "${TRINO_JAVA_HOME:-}" "${JAVA_HOME:-}" $(ls -d /usr/lib/jvm/* /opt/java/* 2>/dev/null | sort -rV); do
    [ -n "$c" ] && [ -x "$c/bin/java" ] || continue
    if [ "$(major "$c")" -ge 24 ] 2>/dev/null; then echo "$c"; return; fi
  done
  cat >&2 <<EOF
trino.sh: Trino $TRINO_VERSION needs a JDK 24 or later and none was found (TRINO_JAVA_HOME, JAVA_HOME, /usr/lib/jvm).
Install one, e.g. Eclipse Temurin 25 (Debian/Ubuntu: the package temurin-25-jdk from Adoptium's apt repository,
https://adoptium.net/installation/linux/), and set TRINO_JAVA_HOME to its home if it is not under /usr/lib/jvm.
EOF
  exit 1
}

start() {
  local dir=$1 port=$2; shift 2
  fetch
  local jdk; jdk=$(java_home)
  dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
  mkdir -p "$dir/etc/catalog" "$dir/data"
  rm -rf "$dir/plugin" && mkdir -p "$dir/plugin"
  local p
  for p in ${TRINO_PLUGINS:-iceberg}; do
    [ -d "$SERVER/plugin/$p" ] || { echo "trino.sh: no plugin $p in $SERVER/plugin" >&2; exit 1; }
    ln -s "$SERVER/plugin/$p" "$dir/plugin/$p"
  done
  local f
  for f in "$@"; do cp "$f" "$dir/etc/catalog/"; done
  cat >"$dir/etc/node.properties" <<EOF
node.environment=connectd
node.id=connectd-$port
node.data-dir=$dir/data
node.internal-address=127.0.0.1
node.bind-ip=127.0.0.1
EOF
  cat >"$dir/etc/jvm.config" <<EOF
-server
-Xmx${TRINO_HEAP:-1g}
-XX:+UseSerialGC
-XX:+ExitOnOutOfMemoryError
-XX:ReservedCodeCacheSize=256M
-Djdk.attach.allowAttachSelf=true
EOF
  cat >"$dir/etc/config.properties" <<EOF
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$port
discovery.uri=http://127.0.0.1:$port
query.max-memory=300MB
query.max-memory-per-node=300MB
task.concurrency=2
plugin.dir=$dir/plugin
EOF
  "$SERVER/bin/launcher" start -jvm-dir "$jdk" -etc-dir "$dir/etc" -data-dir "$dir/data" \
    -pid-file "$dir/trino.pid" -server-log-file "$dir/server.log" -launcher-log-file "$dir/launcher.log" >&2
  # ready when /v1/info says it is no longer starting and a query runs
  local i
  for i in $(seq 1 300); do
    if curl -fsS "http://127.0.0.1:$port/v1/info" 2>/dev/null | grep -q '"starting":false'; then
      echo "http://127.0.0.1:$port"
      return
    fi
    if ! "$SERVER/bin/launcher" status -pid-file "$dir/trino.pid" -data-dir "$dir/data" -etc-dir "$dir/etc" >/dev/null 2>&1; then
      echo "trino.sh: the server exited; $dir/server.log:" >&2
      tail -40 "$dir/server.log" "$dir/launcher.log" >&2 2>/dev/null || true
      exit 1
    fi
    sleep 2
  done
  echo "trino.sh: not ready after 600 s; see $dir/server.log" >&2
  exit 1
}

stop() {
  local dir=$1
  [ -f "$dir/trino.pid" ] || return 0
  "$SERVER/bin/launcher" stop -pid-file "$dir/trino.pid" -data-dir "$dir/data" -etc-dir "$dir/etc" >&2 || true
}

cmd=${1:-}; shift || true
case "$cmd" in
fetch) fetch; echo "$SERVER" ;;
java) java_home ;;
start) [ $# -ge 2 ] || { echo "usage: $0 start DIR PORT CATALOG.properties..." >&2; exit 2; }; start "$@" ;;
stop) stop "${1:?dir}" ;;
cli) fetch; jdk=$(java_home); exec "$jdk/bin/java" -jar "$CLI" "$@" ;;
*) echo "usage: $0 fetch | java | start DIR PORT CATALOG.properties... | stop DIR | cli ARGS..." >&2; exit 2 ;;
esac
