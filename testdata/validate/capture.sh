#!/usr/bin/env bash
# testdata/validate/capture.sh — rewrite smt-golden.json and full-golden.json from a JVM Connect worker's
# validate answers.
#
# Starts a JVM Connect standalone worker (connect-runtime + connect-file + connect-transforms of
# testdata/distributed/jvm.sh, from Maven Central) against $KAFKA_BOOTSTRAP, sends every case of
# smt-cases.json and full-cases.json to PUT /connector-plugins/<connector>/config/validate through
# TestValidateJVMGoldens and TestValidateJVMFullAnswers -capture-jvm-validate, and stops the worker. The worker's
# converters are those the tests give connectd's validator (captureWorkerProps).
#   scripts/with-kafka.sh testdata/validate/capture.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
: "${KAFKA_BOOTSTRAP:?run under scripts/with-kafka.sh or export KAFKA_BOOTSTRAP}"
CP="$(bash "$ROOT/testdata/distributed/jvm.sh" classpath)"
PORT="$(bash "$ROOT/scripts/kafka.sh" free-port)"
DIR="$(mktemp -d)"
cat > "$DIR/worker.properties" <<PROPS
bootstrap.servers=$KAFKA_BOOTSTRAP
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=$DIR/offsets
listeners=http://127.0.0.1:$PORT
PROPS
printf 'rootLogger.level=WARN\nrootLogger.appenderRef.stdout.ref=STDOUT\nappender.stdout.type=Console\nappender.stdout.name=STDOUT\nappender.stdout.layout.type=PatternLayout\nappender.stdout.layout.pattern=[%%d] %%p %%m (%%c)%%n\n' > "$DIR/log4j2.properties"
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
cd "$ROOT" && go test -count=1 -run 'TestValidateJVM(Goldens|FullAnswers)$' ./internal/herder/ -capture-jvm-validate="http://127.0.0.1:$PORT"
