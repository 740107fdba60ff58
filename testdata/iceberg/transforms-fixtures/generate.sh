#!/usr/bin/env bash
# Regenerates fixtures.json by running Apache Iceberg's SMTs (org.apache.iceberg:iceberg-kafka-connect-transforms)
# on fixed inputs (needs JDK 17+ and Maven; fetches from Maven Central).
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -B compile exec:java -Dexec.args=fixtures.json -Duser.timezone=UTC
