#!/usr/bin/env bash
# Reads an Iceberg table with the Java generic reader (ReadTable.java next to this script).
#   read.sh METADATA_JSON_LOCATION
# The dependencies (pom.xml) come from Maven Central into ~/.cache/connectd/iceberg-java-reader/lib on
# first use; Java 17 runs the single source file.
set -euo pipefail
meta=${1:?metadata location}
here=$(cd "$(dirname "$0")" && pwd)
lib="$HOME/.cache/connectd/iceberg-java-reader/lib"
if [ ! -f "$lib/.complete" ]; then
  mkdir -p "$lib"
  exec 9>"$lib.lock"
  flock 9
  if [ ! -f "$lib/.complete" ]; then
    mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib" >&2
    touch "$lib/.complete"
  fi
  flock -u 9
fi
exec java -Xmx512m -XX:TieredStopAtLevel=1 -cp "$lib/*" "$here/ReadTable.java" "$meta"
