#!/usr/bin/env bash
# testdata/iceberg/configdef/capture.sh — rewrite apache-sink-1.10.1.json: the Apache Iceberg sink 1.10.1's
# GET /connector-plugins/org.apache.iceberg.connect.IcebergSinkConnector/config as a JVM Connect 4.3.1
# standalone worker answers it with the sink on its plugin.path (both from Maven Central, cached under
# ~/.cache/connectd: testdata/distributed/jvm.sh and scripts/bench-iceberg-jvm/pom.xml).
#   scripts/with-kafka.sh testdata/iceberg/configdef/capture.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
: "${KAFKA_BOOTSTRAP:?run under scripts/with-kafka.sh or export KAFKA_BOOTSTRAP}"
VERSION=1.10.1
CP="$(bash "$ROOT/testdata/distributed/jvm.sh" classpath)"
PLUGIN="${KAFKA_CACHE:-$HOME/.cache/connectd}/iceberg-sink-jvm-$VERSION-pg"
mkdir -p "$PLUGIN/plugin"
(
  exec 9>"$PLUGIN.lock"; flock 9
  if [[ ! -f "$PLUGIN/.complete" ]]; then
    mvn -q -B -f "$ROOT/scripts/bench-iceberg-jvm/pom.xml" dependency:copy-dependencies -DoutputDirectory="$PLUGIN/plugin" >&2
    touch "$PLUGIN/.complete"
  fi
)
PORT="$(bash "$ROOT/scripts/kafka.sh" free-port)"
DIR="$(mktemp -d)"
mkdir -p "$DIR/plugins/iceberg"
ln -s "$PLUGIN"/plugin/*.jar "$DIR/plugins/iceberg/"
cat > "$DIR/worker.properties" <<PROPS
bootstrap.servers=$KAFKA_BOOTSTRAP
listeners=http://127.0.0.1:$PORT
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=$DIR/offsets
plugin.path=$DIR/plugins
PROPS
java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$CP" org.apache.kafka.connect.cli.ConnectStandalone \
  "$DIR/worker.properties" > "$DIR/jvm.log" 2>&1 &
JVM=$!
trap 'kill $JVM 2>/dev/null; wait $JVM 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 1 360); do
  curl -sf "http://127.0.0.1:$PORT/connectors" >/dev/null && break
  kill -0 $JVM 2>/dev/null || { cat "$DIR/jvm.log" >&2; exit 1; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/connector-plugins" | grep -o '"class":"org.apache.iceberg[^}]*}' >&2
curl -sf "http://127.0.0.1:$PORT/connector-plugins/org.apache.iceberg.connect.IcebergSinkConnector/config" |
  python3 -c 'import json,sys; json.dump(json.load(sys.stdin), sys.stdout, indent=1, ensure_ascii=False); print()' > "$HERE/apache-sink-$VERSION.json"
echo "wrote $HERE/apache-sink-$VERSION.json" >&2
