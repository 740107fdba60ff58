#!/usr/bin/env bash
# Regenerates ../fixtures.json by running the JVM's own SimpleHeaderConverter (needs JDK 17+ and Maven; fetches
# from Maven Central). The JVM default time zone and locale matter to Values (SimpleDateFormat), so both are pinned.
# Another Kafka release: ./generate.sh -Dkafka.version=4.3.1
set -euo pipefail
cd "$(dirname "$0")"
MAVEN_OPTS="${MAVEN_OPTS:-} -Duser.timezone=UTC -Duser.language=en -Duser.country=US" \
  mvn -q -B "$@" compile exec:java -Dexec.args=../fixtures.json
