#!/usr/bin/env bash
# Regenerates the golden control events of the Apache Iceberg sink in this directory (Gen.java): NAME.b64 as
# the sink's own classes encode them (iceberg-kafka-connect-events 1.10.1, see javacp.sh) and NAME.txt as
# Dump.java prints them decoded. start-commit.b64 is the START_COMMIT event of the group connect-cdc-golden.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
cp="$(bash javacp.sh)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
javac -d "$out" -cp "$cp" Gen.java Dump.java
java -cp "$cp:$out" Gen .
