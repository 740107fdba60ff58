#!/usr/bin/env bash
# Measures start → REST-ready time and idle RSS of a standalone connectd worker, and of a JVM Connect
# standalone worker side by side when its jars are cached (~/.cache/connectd/connect-jvm-*/libs, fetched by
# the distributed-mode takeover test). Needs KAFKA_BOOTSTRAP (run it through scripts/with-kafka.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KAFKA_BOOTSTRAP:?run through scripts/with-kafka.sh}"
RUNS="${RUNS:-5}"
tmp="$(mktemp -d)"; mkdir -p "$tmp/plugins"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/connectd" ./cmd/connectd

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }

measure() { # name cmd...
  local name="$1"; shift
  local total=0 rss_sum=0
  for i in $(seq "$RUNS"); do
    local p; p="$(port)"
    sed "s/@PORT@/$p/" "$tmp/worker.tmpl" > "$tmp/worker.properties"
    local t0; t0="$(now_ms)"
    "$@" "$tmp/worker.properties" > "$tmp/$name.log" 2>&1 &
    local pid=$!
    until curl -fs "http://127.0.0.1:$p/connectors" > /dev/null 2>&1; do
      sleep 0.01
      kill -0 "$pid" 2>/dev/null || { echo "$name exited; log:"; tail -20 "$tmp/$name.log"; return 1; }
    done
    local t1; t1="$(now_ms)"
    sleep 5
    # the JVM launcher may fork; measure the whole process tree
    local rss; rss="$(ps -o rss= --ppid "$pid" --pid "$pid" | awk '{s+=$1} END {print s}')"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    total=$((total + t1 - t0)); rss_sum=$((rss_sum + rss))
  done
  printf '%-28s start→REST-ready %5d ms (mean of %d)   idle RSS %6d KiB\n' "$name" $((total / RUNS)) "$RUNS" $((rss_sum / RUNS))
}

cat > "$tmp/worker.tmpl" <<PROPS
bootstrap.servers=$KAFKA_BOOTSTRAP
listeners=http://127.0.0.1:@PORT@
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=$tmp/offsets
plugin.path=$tmp/plugins
PROPS

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -srm)"
measure connectd "$tmp/connectd" standalone
jvm="$(ls -d "$HOME"/.cache/connectd/connect-jvm-*/libs 2>/dev/null | tail -1 || true)"
if [[ -n "$jvm" ]]; then
  measure "JVM Connect ($(basename "$(dirname "$jvm")"))" java -Xms256m -Xmx2g -cp "$jvm/*" org.apache.kafka.connect.cli.ConnectStandalone
else
  echo "JVM Connect jars not cached: skipped (run the distributed takeover test once to fetch them)"
fi
