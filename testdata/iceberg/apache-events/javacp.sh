#!/usr/bin/env bash
# Prints the classpath of the Apache Iceberg sink's event classes: iceberg-kafka-connect-events 1.10.1 from
# Maven Central and the Iceberg and Avro jars of the tests' Java reader (test/cdcmodel/testdata/javareader),
# fetching them on first use.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
events="${HOME}/.m2/repository/org/apache/iceberg/iceberg-kafka-connect-events/1.10.1/iceberg-kafka-connect-events-1.10.1.jar"
if [ ! -f "$events" ]; then
  mvn -q -B dependency:get -Dartifact=org.apache.iceberg:iceberg-kafka-connect-events:1.10.1 >&2
fi
lib="${HOME}/.cache/connectd/iceberg-java-reader/lib"
if [ ! -f "$lib/.complete" ]; then # as read.sh fills it
  mkdir -p "$lib"
  exec 9>"$lib.lock"
  flock 9
  if [ ! -f "$lib/.complete" ]; then
    mvn -q -B -f "$root/test/cdcmodel/testdata/javareader/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib" >&2
    touch "$lib/.complete"
  fi
  flock -u 9
fi
echo "$events:$lib/*"
