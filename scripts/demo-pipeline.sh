#!/usr/bin/env bash
# The whole pipeline on one machine (`make demo`): demo Debezium CDC -> embedded Kafka -> the ClickHouse current
# table and the Iceberg tables, with a reconcile report of the two current tables every interval at
# /connectd/reconcile. Ctrl-C stops everything.
#
# The ClickHouse side is the real ClickHouse engine (chDB: libchdb.so from npm, fetched once by scripts/chdb.sh)
# served over the native protocol by internal/testutil/chdb/chshimd. That server is a LOCAL STAND-IN for a ClickHouse
# server: TEST INFRASTRUCTURE, NOT PART OF CONNECTD (loopback only, no authentication). connectd only speaks the native
# protocol to the server it is pointed at; with a real ClickHouse server run `connectd dev -clickhouse host:9000`.
#
# Knobs (environment): DEMO_DATA (dev-data/demo; emptied at start, since the embedded broker starts empty too),
# REST (http://127.0.0.1:8083), KAFKA_PORT (9092), CH_PORT (9000, native), CH_HTTP_PORT (8123, queries),
# RECONCILE_INTERVAL (30s), INTERVAL (500ms between demo events), BIN (bin), DRILL_AFTER (90: seconds before the
# restore drill of the Iceberg current table into the namespace drill and the ClickHouse database demo_drill, whose
# evidence record lands in $DEMO_DATA/drills).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
data=${DEMO_DATA:-dev-data/demo}
rest=${REST:-http://127.0.0.1:8083}
kafka_port=${KAFKA_PORT:-9092}
ch_port=${CH_PORT:-9000}
ch_http=${CH_HTTP_PORT:-8123}
bin=${BIN:-bin}

rm -rf "$data"
mkdir -p "$data" "$bin"
go build -o "$bin/connectd" ./cmd/connectd
go build -o "$bin/chshimd" ./internal/testutil/chdb/chshimd

shim=
dev=
drill=
stop() {
	trap - EXIT INT TERM
	[ -n "$drill" ] && kill -TERM "$drill" 2>/dev/null && wait "$drill" 2>/dev/null
	[ -n "$dev" ] && kill -TERM "$dev" 2>/dev/null && wait "$dev" 2>/dev/null
	[ -n "$shim" ] && kill -TERM "$shim" 2>/dev/null && wait "$shim" 2>/dev/null
	exit 0
}
trap stop EXIT INT TERM

echo "demo-pipeline: starting chshimd, a local stand-in for a ClickHouse server (chDB behind the native-protocol test shim; test infrastructure, not part of connectd). The first run fetches libchdb.so from npm (~566 MB unpacked)."
"$bin/chshimd" -native "127.0.0.1:$ch_port" -http "127.0.0.1:$ch_http" -data "$data/clickhouse" >"$data/chshimd.log" 2>&1 &
shim=$!
until curl -sf "http://127.0.0.1:$ch_http/" >/dev/null 2>&1; do
	if ! kill -0 "$shim" 2>/dev/null; then
		cat "$data/chshimd.log" >&2
		echo "demo-pipeline: the ClickHouse stand-in did not start" >&2
		shim=
		exit 1
	fi
	sleep 0.5
done
sed 's/^/  /' "$data/chshimd.log"
cat <<EOF

  ClickHouse FINAL:  curl -s 127.0.0.1:$ch_http --data-binary 'SELECT * FROM default.customers FINAL ORDER BY id FORMAT PrettyCompact'
  DuckDB on Iceberg: scripts/iceberg-query.sh $data/iceberg/catalog.db inventory.customers 'SELECT * FROM t ORDER BY id'
  reconcile:         curl -s ${rest%/}/connectd/reconcile | jq '.pairs[] | {result, ran_at, rows: .report.iceberg.rows}'
  restore drill:     after ${DRILL_AFTER:-90} s, its evidence record in $data/drills/restore-drill-*.md
EOF

# one restore drill once the tables hold data: restore the Iceberg current table into the namespace drill,
# rebuild ClickHouse from it into demo_drill, reconcile both, and keep the evidence record
(
	child=
	trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; exit 0' TERM
	sleep "${DRILL_AFTER:-90}" &
	child=$!
	wait "$child"
	mkdir -p "$data/drills"
	"$bin/connectd" restore-drill "$data/reconcile.properties" drill.namespace=drill drill.clickhouse.database=demo_drill \
		drill.record.dir="$data/drills" >"$data/drills/drill.log" 2>&1 &
	child=$!
	if wait "$child"; then
		echo "demo-pipeline: restore drill PASSED; evidence record:"
	else
		echo "demo-pipeline: restore drill did not pass (log: $data/drills/drill.log); evidence record:"
	fi
	child=
	for f in "$data"/drills/restore-drill-*.md; do [ -f "$f" ] && sed 's/^/  /' "$f"; done
) &
drill=$!

# connectd dev creates the ClickHouse table (ReplacingMergeTree(_version, is_deleted)) when it is missing
"$bin/connectd" dev -data "$data" -rest "$rest" -kafka-port "$kafka_port" -interval "${INTERVAL:-500ms}" \
	-clickhouse "127.0.0.1:$ch_port" -reconcile-interval "${RECONCILE_INTERVAL:-30s}" &
dev=$!
wait "$dev" || true
dev=
