#!/usr/bin/env bash
# Kafka → Iceberg, connectd vs JVM Connect with the Apache Iceberg sink, side by side on the same topic.
#
#   scripts/with-kafka.sh scripts/bench-iceberg-jvm.sh
#
# N flat schemaless JSON records of ~SIZE bytes (internal/benchtools/produce -json) in PARTITIONS partitions, produced
# once. Each worker then runs a fresh sink connector (own consumer group, own JDBC catalog and file warehouse,
# append mode, tasks.max=TASKS, iceberg.control.commit.interval-ms=COMMIT_MS) from the beginning of the topic. Time
# runs from the connector POST until the table's current snapshot holds N records; CPU-seconds are the worker
# process tree's utime+stime in that window; peak RSS is VmHWM. At the end DuckDB (scripts/iceberg-query.sh) counts
# the rows of each table. Snapshots and data files are the table's at the end.
#
# MODE=upsert: the topic holds N updates of KEYS keys (record i is key i mod KEYS at version i, Kafka key = id) and
# both sinks run with iceberg.tables.upsert-mode-enabled and default-id-columns=id; time runs until the connector's
# consumer group has committed all N records and DuckDB sees KEYS rows, each at its final version. The Apache Iceberg
# sink has no upsert mode (1.10.1, and none up to 1.12.0 on Maven Central): the JVM side ignores those keys and
# appends all N records, so its line is its append cost on the same records.
#
# Environment: MODE (append), KEYS (100000), N (1000000), SIZE (406), PARTITIONS (6), TASKS (3), COMMIT_MS (10000), WORKERS ("connectd jvm"),
# CATALOG (postgres: a PostgreSQL server from Debian's package, scripts/iceberg-postgres.sh, one database per worker;
# sqlite: a SQLite JDBC catalog file per worker, where the JVM sink's commits can fail with SQLITE_BUSY under load),
# SINK_EXTRA (extra connector config as ,"key":"value" pairs, both workers), JVM_HEAP (-Xms256m -Xmx2g), CONNECTD_BIN
# (a prebuilt connectd binary to measure instead of building this tree), BASELINE_BIN (a second connectd binary, e.g. one
# built from an earlier commit, measured as the worker `baseline` when WORKERS names it: WORKERS="baseline connectd"
# compares two builds, and the summary gives the median of connectd / baseline per repetition), WORKER_PROPS (extra
# worker property lines, e.g.
# connectd.debug.pprof.enable=true; PROFILE=SECONDS then saves a CPU profile of connectd's first SECONDS after the POST
# as connectd.cpu.pprof in the kept directory, the first connectd run only; HEAP=SECONDS saves a heap profile of each
# connectd run SECONDS after the POST as <run>.heap.pprof), RUN_TIMEOUT (900 s per worker), KEEP=1 (keep
# the logs and tables), REPEAT (3: how many times each worker runs; the order alternates, WORKERS' order in odd
# repetitions and reversed in even ones, and a summary gives each worker's median and the median of the ratios per
# repetition: on a virtual machine the first process to touch memory the guest has not used yet pays for the host to
# back it, and one run moves the ratio by ~0.05).
# The broker of scripts/kafka.sh sets group.initial.rebalance.delay.ms=0 for fast tests: then one task's consumer can
# be assigned every partition for a heartbeat interval and read most of the topic before a rebalance hands half of it
# to the other tasks, which read it again (a run at about twice the CPU). Run against the broker's default with
# KAFKA_EXTRA_CONFIG=group.initial.rebalance.delay.ms=3000 before scripts/with-kafka.sh.
# The JVM side copies JVM Connect 4.3.1 (testdata/distributed/jvm.sh) and the Apache Iceberg sink 1.10.1 with
# its dependencies (bench-iceberg-jvm/pom.xml) from Maven Central into ~/.cache/connectd on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KAFKA_BOOTSTRAP:?run through scripts/with-kafka.sh}"
N="${N:-1000000}"; SIZE="${SIZE:-406}"; PARTITIONS="${PARTITIONS:-6}"; TASKS="${TASKS:-3}"; COMMIT_MS="${COMMIT_MS:-10000}"
MODE="${MODE:-append}"; KEYS="${KEYS:-100000}"
WORKERS="${WORKERS:-connectd jvm}"; REPEAT="${REPEAT:-3}"; CATALOG="${CATALOG:-postgres}"; RUN_TIMEOUT="${RUN_TIMEOUT:-900}"; SINK_EXTRA="${SINK_EXTRA:-}"; JVM_HEAP="${JVM_HEAP:--Xms256m -Xmx2g}"
here="$(pwd)/scripts/bench-iceberg-jvm"
tmp="$(mktemp -d)"; mkdir -p "$tmp/plugins"
if [[ -n "${KEEP:-}" ]]; then
  echo "logs and tables kept in $tmp"; trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
else
  trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
fi
mkdir -p "$tmp/bin"
# built aside and copied: a binary the linker wrote itself shows ~15 MiB more file-backed RSS than a copy of it
if [[ -z "${CONNECTD_BIN:-}" ]]; then go build -o "$tmp/connectd.built" ./cmd/connectd; CONNECTD_BIN="$tmp/connectd.built"; fi
cp "$CONNECTD_BIN" "$tmp/bin/connectd"
if [[ " $WORKERS " == *" baseline "* ]]; then cp "${BASELINE_BIN:?WORKERS names baseline: set BASELINE_BIN}" "$tmp/bin/baseline"; fi
topic="bench-iceberg-$RANDOM$RANDOM"
go build -o "$tmp/bin/groupoffsets" ./internal/benchtools/groupoffsets
keys_flag=""; upsert=""
if [[ "$MODE" == upsert ]]; then
  keys_flag="-keys $KEYS"
  upsert=',"iceberg.tables.upsert-mode-enabled":"true","iceberg.tables.default-id-columns":"id"'
fi
# shellcheck disable=SC2086
go run ./internal/benchtools/produce -bootstrap "$KAFKA_BOOTSTRAP" -topic "$topic" -n "$N" -size "$SIZE" -partitions "$PARTITIONS" -json $keys_flag
# A broker's first group request creates __consumer_offsets; until it exists, joins are refused and retried.
# Have it made now, so that the first worker measured does not pay for it (and its tasks join together).
for _ in $(seq 30); do
  "$tmp/bin/groupoffsets" -bootstrap "$KAFKA_BOOTSTRAP" -group bench-warm-up -topic "$topic" > /dev/null 2>&1 && break
  sleep 1
done
duck() { "$(bash scripts/iceberg-reader-setup.sh)" testdata/iceberg/reader/duckdb_read.py "$1" --query "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0][0])'; }
# done: whether the table holds all N records (append) or every key at its final version (upsert)
done_yet() { # name dir
  if [[ "$MODE" != upsert ]]; then
    [[ $(stats "$2" "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])') -ge $N ]]
    return
  fi
  [[ $("$tmp/bin/groupoffsets" -bootstrap "$KAFKA_BOOTSTRAP" -group "connect-bench-$1" -topic "$topic") -ge $N ]] || return 1
  local m; m="$(metadata "$2" "$1")"; [[ -n "$m" ]] || return 1
  [[ $(duck "$m" "SELECT count(*) FROM t WHERE version >= $((N - KEYS))") -ge $KEYS ]]
}

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
pg_port=""
if [[ "$CATALOG" == postgres ]]; then
  pg_port="$(port)"; pg_dir="$(mktemp -d)" # its own directory: the server runs as the postgres user
  scripts/iceberg-postgres.sh start "$pg_dir" "$pg_port"
  trap 'scripts/iceberg-postgres.sh stop "$pg_dir" >/dev/null 2>&1 || true; rm -rf "$pg_dir"; kill $(jobs -p) 2>/dev/null || true; [[ -n "${KEEP:-}" ]] || rm -rf "$tmp"' EXIT
fi
catalog_uri() { # dir name
  if [[ "$CATALOG" == postgres ]]; then
    psql -q -h 127.0.0.1 -p "$pg_port" -U postgres -c "CREATE DATABASE $2" 2>/dev/null || true
    echo "jdbc:postgresql://127.0.0.1:$pg_port/$2?user=postgres"
  else
    echo "jdbc:sqlite:$1/catalog.db"
  fi
}
metadata() { # dir name: the table's current metadata file ("" before the table exists)
  if [[ "$CATALOG" == postgres ]]; then
    psql -At -h 127.0.0.1 -p "$pg_port" -U postgres -d "$2" \
      -c "SELECT metadata_location FROM iceberg_tables WHERE table_namespace='bench' AND table_name='events'" 2>/dev/null || true
  else
    python3 - "$1/catalog.db" <<'PY'
import os, sqlite3, sys
db = sys.argv[1]
try:
    imm = "" if os.path.exists(db + "-wal") else "&immutable=1"
    r = sqlite3.connect("file:%s?mode=ro%s" % (db, imm), uri=True, timeout=5).execute(
        "SELECT metadata_location FROM iceberg_tables WHERE table_namespace='bench' AND table_name='events'").fetchone()
    print(r[0] if r else "")
except sqlite3.Error:
    print("")
PY
  fi
}
stats() { python3 "$here/table_stats.py" --metadata "$(metadata "$1" "$2")"; }

jvm_plugin() { # the Apache Iceberg sink and its dependencies, from Maven Central once
  local dir="$HOME/.cache/connectd/iceberg-sink-jvm-1.10.1-pg"
  if [[ ! -f "$dir/.complete" ]]; then
    mkdir -p "$dir/plugin"
    exec 9>"$dir.lock"; flock 9
    if [[ ! -f "$dir/.complete" ]]; then
      mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir/plugin" >&2
      touch "$dir/.complete"
    fi
    flock -u 9
  fi
  echo "$dir/plugin"
}

CPUS=(); RSSS=(); RATIOS=(); BRATIOS=()
declare -A CPU RSS
run() { # kind name catalog-dir cmd...: kind connectd, baseline or jvm, name unique per run (group, database, logs)
  local kind="$1" name="$2" dir="$3"; shift 3
  local extra=""
  # the JVM's SQLite JDBC driver gives up on a locked catalog after 3 s; its own tasks and coordinator hold
  # connections to the one file, so a loaded machine makes its commits fail with SQLITE_BUSY
  [[ "$kind" == jvm && "$CATALOG" == sqlite ]] && extra=',"iceberg.catalog.jdbc.busy_timeout":"60000"'
  local p; p="$(port)"
  mkdir -p "$dir/warehouse"
  local uri; uri="$(catalog_uri "$dir" "$name")"
  cat > "$tmp/$name.properties" <<PROPS
bootstrap.servers=$KAFKA_BOOTSTRAP
listeners=http://127.0.0.1:$p
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.storage.file.filename=$tmp/$name.offsets
offset.flush.interval.ms=10000
plugin.path=$tmp/plugins
${WORKER_PROPS:-}
PROPS
  "$@" "$tmp/$name.properties" > "$tmp/$name.log" 2>&1 &
  local pid=$!
  until curl -fs "http://127.0.0.1:$p/connectors" > /dev/null 2>&1; do sleep 0.1; kill -0 $pid || { tail -30 "$tmp/$name.log"; exit 1; }; done
  local control="control-$name-$RANDOM$RANDOM"
  go run ./internal/benchtools/produce -bootstrap "$KAFKA_BOOTSTRAP" -topic "$control" -n 0 -partitions 1 > /dev/null
  local c0; c0=$(cpu_ticks $pid); local t0; t0=$(date +%s%N)
  curl -fs -X POST -H 'Content-Type: application/json' "http://127.0.0.1:$p/connectors" -d "{\"name\":\"bench-$name\",\"config\":{
    \"connector.class\":\"org.apache.iceberg.connect.IcebergSinkConnector\",\"tasks.max\":\"$TASKS\",\"topics\":\"$topic\",
    \"iceberg.tables\":\"bench.events\",\"iceberg.tables.auto-create-enabled\":\"true\",
    \"iceberg.catalog\":\"iceberg\",\"iceberg.catalog.catalog-impl\":\"org.apache.iceberg.jdbc.JdbcCatalog\",
    \"iceberg.catalog.uri\":\"$uri\",\"iceberg.catalog.jdbc.schema-version\":\"V1\",
    \"iceberg.catalog.warehouse\":\"file://$dir/warehouse\",
    \"iceberg.control.topic\":\"$control\",\"iceberg.control.commit.interval-ms\":\"$COMMIT_MS\"$upsert$SINK_EXTRA$extra}}" > /dev/null
  if [[ -n "${PROFILE:-}" && "$kind" == connectd && -z "${profiled:-}" ]]; then
    profiled=1
    curl -fs -o "$tmp/connectd.cpu.pprof" "http://127.0.0.1:$p/debug/pprof/profile?seconds=$PROFILE" &
  fi
  if [[ -n "${HEAP:-}" && "$kind" == connectd ]]; then
    (sleep "$HEAP"; curl -fs -o "$tmp/$name.heap.pprof" "http://127.0.0.1:$p/debug/pprof/heap") &
  fi
  local deadline=$((SECONDS + RUN_TIMEOUT))
  until done_yet "$name" "$dir"; do
    sleep 1
    kill -0 $pid || { tail -30 "$tmp/$name.log"; exit 1; }
    if [[ $SECONDS -gt $deadline ]]; then echo "$name: not done after ${RUN_TIMEOUT}s ($(stats "$dir" "$name")); log tail:" >&2; tail -40 "$tmp/$name.log" >&2; exit 1; fi
  done
  local t1; t1=$(date +%s%N); local c1; c1=$(cpu_ticks $pid); local hwm; hwm=$(hwm_kib $pid)
  # measured: a worker that hangs in its shutdown (the JVM's can) is killed after 30 s
  kill $pid
  for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
  local st; st=$(stats "$dir" "$name")
  local rows; rows=$(duck "$(metadata "$dir" "$name")" 'SELECT count(*) FROM t')
  local secs; secs=$(python3 -c "print(($t1-$t0)/1e9)")
  local cpu; cpu=$(python3 -c "print(($c1-$c0)/$hz)")
  CPU[$kind]=$(python3 -c "print($cpu*1e6/$N)"); RSS[$kind]=$((hwm / 1024))
  CPUS+=("$kind=${CPU[$kind]}"); RSSS+=("$kind=${RSS[$kind]}")
  python3 -c "
import json; st=json.loads('$st'); n=$N; s=$secs; c=$cpu
print('%-22s %8.0f records/s  %6.2f CPU-s per million  peak RSS %5d MiB  snapshots %d  data files %d  DuckDB rows %s' % ('$name', n/s, c*1e6/n, $hwm//1024, st['snapshots'], st['data_files'], '$rows'))"
  # the Apache sink (1.10.1, and up to 1.12.0 on Maven Central) has no upsert mode: it appends every record
  local want=$N; [[ "$MODE" == upsert && "$kind" != jvm ]] && want=$KEYS
  [[ "$rows" == "$want" ]] || { echo "$name: DuckDB sees $rows rows, want $want" >&2; exit 1; }
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg); $MODE, N=$N JSON records of ~$SIZE B$([[ "$MODE" == upsert ]] && echo " over $KEYS keys"), $PARTITIONS partitions, tasks.max=$TASKS, commit interval ${COMMIT_MS} ms"
if [[ " $WORKERS " == *" jvm "* ]]; then
  jvm="$(testdata/distributed/jvm.sh fetch)" # JVM Connect 4.3.1 from Maven Central, cached after the first run
  plugin="$(jvm_plugin)"
  mkdir -p "$tmp/plugins/iceberg"
  ln -s "$plugin"/*.jar "$tmp/plugins/iceberg/"
  printf '%s\n' 'appender.out.type = Console' 'appender.out.name = OUT' 'appender.out.layout.type = PatternLayout' \
    'appender.out.layout.pattern = [%d] %p %m (%c)%n' 'rootLogger.level = WARN' 'rootLogger.appenderRef.out.ref = OUT' \
    'logger.iceberg.name = org.apache.iceberg' 'logger.iceberg.level = INFO' > "$tmp/log4j2.properties"
fi
order=($WORKERS)
for rep in $(seq "$REPEAT"); do
  ws=("${order[@]}")
  if (( rep % 2 == 0 )); then ws=(); for ((i=${#order[@]}-1; i>=0; i--)); do ws+=("${order[i]}"); done; fi
  sfx=""; [[ "$REPEAT" -gt 1 ]] && sfx="$rep"
  CPU=(); RSS=()
  for w in "${ws[@]}"; do
    case "$w" in
      connectd) run connectd "connectd$sfx" "$tmp/connectd$sfx" "$tmp/bin/connectd" standalone ;;
      baseline) run baseline "baseline$sfx" "$tmp/baseline$sfx" "$tmp/bin/baseline" standalone ;;
      jvm)
        mkdir -p "$tmp/jvm$sfx/warehouse"
        # pre-create the table: the sink's tasks race on SQLite when they auto-create it
        java -cp "$plugin/*" "$here/CreateTable.java" "$(catalog_uri "$tmp/jvm$sfx" "jvm$sfx")" "file://$tmp/jvm$sfx/warehouse" bench.events
        # shellcheck disable=SC2086
        run jvm "jvm$sfx" "$tmp/jvm$sfx" java $JVM_HEAP -Dlog4j2.configurationFile="$tmp/log4j2.properties" -cp "$jvm/*" org.apache.kafka.connect.cli.ConnectStandalone
        ;;
    esac
  done
  if [[ -n "${CPU[connectd]:-}" && -n "${CPU[jvm]:-}" ]]; then
    r=$(python3 -c "print('%.4f %.4f' % (${CPU[connectd]}/${CPU[jvm]}, ${RSS[connectd]}/${RSS[jvm]}))")
    RATIOS+=("$r")
    python3 -c "print('connectd / JVM: CPU per record %.2f, peak RSS %.2f' % tuple(map(float, '$r'.split())))"
  fi
  if [[ -n "${CPU[connectd]:-}" && -n "${CPU[baseline]:-}" ]]; then
    r=$(python3 -c "print('%.4f %.4f' % (${CPU[connectd]}/${CPU[baseline]}, ${RSS[connectd]}/${RSS[baseline]}))")
    BRATIOS+=("$r")
    python3 -c "print('connectd / baseline: CPU per record %.2f, peak RSS %.2f' % tuple(map(float, '$r'.split())))"
  fi
done
if [[ "$REPEAT" -gt 1 ]]; then
  python3 - "${CPUS[*]}" "${RSSS[*]}" "${RATIOS[*]:-}" "${BRATIOS[*]:-}" <<'PY'
import statistics, sys
def per_kind(s):
    d = {}
    for kv in s.split():
        k, v = kv.split("=")
        d.setdefault(k, []).append(float(v))
    return d
cpu, rss = per_kind(sys.argv[1]), per_kind(sys.argv[2])
for k in cpu:
    print("median of %d %-10s %6.2f CPU-s per million  peak RSS %5d MiB" % (len(cpu[k]), k, statistics.median(cpu[k]), statistics.median(rss[k])))
for arg, what in ((sys.argv[3], "JVM"), (sys.argv[4], "baseline")):
    vals = arg.split()
    pairs = [(float(vals[i]), float(vals[i + 1])) for i in range(0, len(vals) - 1, 2)]
    if pairs:
        print("connectd / %s, median of %d repetitions: CPU per record %.2f (%s), peak RSS %.2f (%s)" % (
            what, len(pairs), statistics.median(p[0] for p in pairs), " ".join("%.2f" % p[0] for p in pairs),
            statistics.median(p[1] for p in pairs), " ".join("%.2f" % p[1] for p in pairs)))
PY
fi
