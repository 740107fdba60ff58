#!/usr/bin/env bash
# Regenerates the golden control events of the Apache Iceberg sink in this directory (Gen.java): NAME.b64 as
# the sink's own classes encode them (iceberg-kafka-connect-events 1.10.1 from Maven Central, with the
# Iceberg and Avro jars the Java reader of the tests uses) and NAME.txt as Dump.java prints them decoded.
# start-commit.b64 is the START_COMMIT event of the group connect-cdc-golden.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
mvn -q dependency:get -Dartifact=org.apache.iceberg:iceberg-kafka-connect-events:1.10.1
lib="${HOME}/.cache/connectd/iceberg-java-reader/lib" # filled by the Java reader's first run (test/cdcmodel)
cp="${HOME}/.m2/repository/org/apache/iceberg/iceberg-kafka-connect-events/1.10.1/iceberg-kafka-connect-events-1.10.1.jar:$(ls "$lib"/*.jar | tr '\n' ':')"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
javac -d "$out" -cp "$cp" Gen.java Dump.java
java -cp "$cp:$out" Gen .
