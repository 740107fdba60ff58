#!/usr/bin/env bash
# testdata/distributed/jvm.sh — the JVM side of the distributed-mode tests.
#   fetch   resolve connect-runtime + connect-file (Kafka $CONNECT_VERSION) from Maven Central into
#           $CACHE/connect-jvm-$CONNECT_VERSION/libs and print that directory
#   golden  regenerate protocol-golden.txt with the JVM's own serializers (GoldenGen.java)
#   classpath  print the classpath of a JVM Connect worker (org.apache.kafka.connect.cli.ConnectDistributed)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONNECT_VERSION="${CONNECT_VERSION:-4.3.1}"   # connect-file is not published for 4.4.0
CACHE="${KAFKA_CACHE:-$HOME/.cache/connectd}"
LIBS="$CACHE/connect-jvm-$CONNECT_VERSION/libs"
fetch() {
  if [[ ! -f "$LIBS/.complete" ]]; then
    # resolve into a private directory and rename it into place, so concurrent callers never see half a set
    local tmp
    tmp="$(mktemp -d "$CACHE/connect-jvm-$CONNECT_VERSION.XXXXXX")"
    (cd "$HERE/jvm" && mvn -q -B -Dkafka.version="$CONNECT_VERSION" dependency:copy-dependencies \
       -DoutputDirectory="$tmp/libs" -DincludeScope=runtime >&2)
    touch "$tmp/libs/.complete"
    mkdir -p "$(dirname "$LIBS")"
    if ! mv -T "$tmp/libs" "$LIBS" 2>/dev/null; then
      [[ -f "$LIBS/.complete" ]] || { rm -rf "$LIBS"; mv -T "$tmp/libs" "$LIBS"; }
    fi
    rm -rf "$tmp"
  fi
  echo "$LIBS"
}
case "${1:-}" in
  fetch) fetch ;;
  classpath) fetch >/dev/null; echo "$LIBS/*" ;;
  golden)
    fetch >/dev/null
    out="$(mktemp -d)"
    javac -d "$out" -cp "$LIBS/*" "$HERE/jvm/src/main/java/connectd/GoldenGen.java"
    java -cp "$out:$LIBS/*" connectd.GoldenGen > "$HERE/protocol-golden.txt"
    rm -rf "$out" ;;
  *) echo "usage: $0 {fetch|golden|classpath}" >&2; exit 2 ;;
esac
