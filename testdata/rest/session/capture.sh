#!/usr/bin/env bash
# testdata/rest/session/capture.sh — rewrite golden.json from a JVM Connect worker's answers to the scripted REST
# session of steps.json.
#
# Starts a JVM Connect 4.3.1 standalone worker (connect-runtime + connect-file + connect-transforms of
# testdata/distributed/jvm.sh, from Maven Central) against $KAFKA_BOOTSTRAP, with the worker settings the replay
# test gives connectd, runs TestRESTSessionMatchesJVM -capture-jvm-session against it, and stops the worker.
#   scripts/with-kafka.sh testdata/rest/session/capture.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
: "${KAFKA_BOOTSTRAP:?run under scripts/with-kafka.sh or export KAFKA_BOOTSTRAP}"
CP="$(bash "$ROOT/testdata/distributed/jvm.sh" classpath)"
PORT="$(bash "$ROOT/scripts/kafka.sh" free-port)"
DIR="$(mktemp -d)"
cat > "$DIR/worker.properties" <<PROPS
bootstrap.servers=$KAFKA_BOOTSTRAP
listeners=http://127.0.0.1:$PORT
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.flush.interval.ms=1000
offset.storage.file.filename=$DIR/offsets
PROPS
printf 'rootLogger.level=INFO\nrootLogger.appenderRef.stdout.ref=STDOUT\nappender.stdout.type=Console\nappender.stdout.name=STDOUT\nappender.stdout.layout.type=PatternLayout\nappender.stdout.layout.pattern=[%%d] %%p %%m (%%c)%%n\n' > "$DIR/log4j2.properties"
java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$DIR/log4j2.properties" \
  -cp "$CP" org.apache.kafka.connect.cli.ConnectStandalone "$DIR/worker.properties" > "$DIR/jvm.log" 2>&1 &
JVM=$!
trap 'kill $JVM 2>/dev/null; wait $JVM 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 1 240); do
  curl -sf "http://127.0.0.1:$PORT/connectors" >/dev/null && break
  kill -0 $JVM 2>/dev/null || { cat "$DIR/jvm.log" >&2; exit 1; }
  sleep 0.5
done
curl -s "http://127.0.0.1:$PORT/" >&2; echo >&2
cd "$ROOT" && go test -count=1 -run 'TestRESTSessionMatchesJVM$' ./cmd/connectd/ -capture-jvm-session="http://127.0.0.1:$PORT"
