#!/usr/bin/env bash
# Regenerates start-commit.b64: a START_COMMIT control event of the Apache Iceberg sink for the consumer group
# connect-cdc-golden, encoded by the sink's own classes (iceberg-kafka-connect-events 1.10.1 from Maven Central,
# with the Iceberg and Avro jars the Java reader of the tests uses).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
mvn -q dependency:get -Dartifact=org.apache.iceberg:iceberg-kafka-connect-events:1.10.1
lib="${HOME}/.cache/connectd/iceberg-java-reader/lib" # filled by the Java reader's first run (test/cdcmodel)
cp="${HOME}/.m2/repository/org/apache/iceberg/iceberg-kafka-connect-events/1.10.1/iceberg-kafka-connect-events-1.10.1.jar:$(ls "$lib"/*.jar | tr '\n' ':')"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
javac -d "$out" -cp "$cp" Gen.java
java -cp "$cp:$out" Gen connect-cdc-golden > start-commit.b64
