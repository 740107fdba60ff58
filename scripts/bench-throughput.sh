#!/usr/bin/env bash
# Kafka → FileStreamSink throughput, connectd vs the JVM Connect worker, side by side on the same topic.
# For each worker: a fresh connector (own consumer group) reads N records from the beginning; we time from the
# POST until the file has N lines and take the CPU-seconds the worker process tree used in that window and its
# peak RSS. Needs KAFKA_BOOTSTRAP (run through scripts/with-kafka.sh). JVM jars: ~/.cache/connectd/connect-jvm-*/libs.
# Environment: N (1000000), SIZE (100), REPEAT (1: how many times each worker runs, the order reversed in even
# repetitions; with more than one, each worker's median is printed), BASELINE_BIN (a second connectd binary, e.g. one
# built from an earlier commit, run as the worker `baseline` beside this tree's), JVM=0 (leave the JVM worker out).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KAFKA_BOOTSTRAP:?run through scripts/with-kafka.sh}"
N="${N:-1000000}"; SIZE="${SIZE:-100}"; REPEAT="${REPEAT:-1}"
tmp="$(mktemp -d)"; mkdir -p "$tmp/plugins"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
# built aside and copied: a binary the linker wrote itself shows ~15 MiB more file-backed RSS than a copy of it
go build -o "$tmp/connectd.built" ./cmd/connectd && cp "$tmp/connectd.built" "$tmp/connectd" && rm "$tmp/connectd.built"
[[ -n "${BASELINE_BIN:-}" ]] && cp "$BASELINE_BIN" "$tmp/baseline"
topic="bench-$RANDOM$RANDOM"
go run ./internal/benchtools/produce -bootstrap "$KAFKA_BOOTSTRAP" -topic "$topic" -n "$N" -size "$SIZE" -partitions 3

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { # utime+stime of a process and its children (threads included)
  local t=0
  for p in "$1" $(pgrep -P "$1" || true); do
    [[ -r /proc/$p/stat ]] && t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat")))
  done
  echo "$t"
}
hwm_kib() { local m=0; for p in "$1" $(pgrep -P "$1" || true); do v=$(awk '/VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0); m=$((m + v)); done; echo "$m"; }
hz=$(getconf CLK_TCK)

run() { # name cmd...
  local name="$1"; shift
  local p; p="$(port)"
  cat > "$tmp/worker.properties" <<PROPS
bootstrap.servers=$KAFKA_BOOTSTRAP
listeners=http://127.0.0.1:$p
key.converter=org.apache.kafka.connect.converters.ByteArrayConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=$tmp/offsets
offset.flush.interval.ms=10000
plugin.path=$tmp/plugins
PROPS
  "$@" "$tmp/worker.properties" > "$tmp/$name.log" 2>&1 &
  local pid=$!
  until curl -fs "http://127.0.0.1:$p/connectors" > /dev/null 2>&1; do sleep 0.05; kill -0 $pid || { tail "$tmp/$name.log"; exit 1; }; done
  local out="$tmp/$name.out"
  local c0; c0=$(cpu_ticks $pid); local t0; t0=$(date +%s%N)
  curl -fs -X POST -H 'Content-Type: application/json' "http://127.0.0.1:$p/connectors" -d "{\"name\":\"bench-$name\",\"config\":{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSinkConnector\",\"tasks.max\":\"1\",\"topics\":\"$topic\",\"file\":\"$out\"}}" > /dev/null
  until [[ -f "$out" ]] && [[ $(wc -l < "$out") -ge $N ]]; do sleep 0.2; done
  local t1; t1=$(date +%s%N); local c1; c1=$(cpu_ticks $pid); local hwm; hwm=$(hwm_kib $pid)
  kill $pid; wait $pid 2>/dev/null || true
  local secs; secs=$(python3 -c "print(($t1-$t0)/1e9)")
  local cpu; cpu=$(python3 -c "print(($c1-$c0)/$hz)")
  python3 -c "n=$N; s=$secs; c=$cpu; print(f'%-34s %9.0f records/s   %6.2f CPU-s per million   peak RSS %5d MiB' % ('$name', n/s, c*1e6/n, $hwm//1024))"
  RESULTS+=("${name%_r*}=$(python3 -c "print('%.4f,%.4f,%d' % ($N/$secs, $cpu*1e6/$N, $hwm//1024))")")
}
RESULTS=()

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg); N=$N records of $SIZE bytes, 3 partitions, FileStreamSink"
jvm=""
[[ "${JVM:-1}" == 0 ]] || jvm="$(ls -d "$HOME"/.cache/connectd/connect-jvm-*/libs 2>/dev/null | tail -1 || true)"
[[ -n "$jvm" || "${JVM:-1}" == 0 ]] || echo "JVM Connect jars not cached: skipped"
workers=(connectd); [[ -n "${BASELINE_BIN:-}" ]] && workers+=(baseline); [[ -n "$jvm" ]] && workers+=(jvm)
for rep in $(seq "$REPEAT"); do
  ws=("${workers[@]}")
  if (( rep % 2 == 0 )); then ws=(); for ((i=${#workers[@]}-1; i>=0; i--)); do ws+=("${workers[i]}"); done; fi
  for w in "${ws[@]}"; do
    case "$w" in
      connectd) run "connectd_r$rep" "$tmp/connectd" standalone ;;
      baseline) run "baseline_r$rep" "$tmp/baseline" standalone ;;
      jvm) run "jvm-connect-$(basename "$(dirname "$jvm")" | sed 's/connect-jvm-//')_r$rep" java -Xms256m -Xmx2g -cp "$jvm/*" org.apache.kafka.connect.cli.ConnectStandalone ;;
    esac
  done
done
if [[ "$REPEAT" -gt 1 ]]; then
  python3 - "${RESULTS[@]}" <<'PY'
import statistics, sys
d = {}
for kv in sys.argv[1:]:
    k, v = kv.split("=")
    d.setdefault(k, []).append([float(x) for x in v.split(",")])
for k, runs in d.items():
    print("median of %d %-28s %9.0f records/s   %6.2f CPU-s per million   peak RSS %5d MiB" % (
        len(runs), k, *(statistics.median(r[i] for r in runs) for i in range(3))))
if "connectd" in d and "baseline" in d:
    c, b = d["connectd"], d["baseline"]
    print("connectd / baseline (medians): CPU per record %.3f, peak RSS %.3f" % (
        statistics.median(r[1] for r in c) / statistics.median(r[1] for r in b),
        statistics.median(r[2] for r in c) / statistics.median(r[2] for r in b)))
PY
fi
