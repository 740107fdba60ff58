#!/usr/bin/env bash
# Runs Apache Iceberg's own REST catalog server (RESTCatalogServer, the iceberg-open-api test
# fixture) over a JdbcCatalog on SQLite, for connectd's REST-catalog tests.
#   scripts/iceberg-rest-server.sh PORT WAREHOUSE_DIR CATALOG_DB
# Dependencies come from Maven Central (testdata/iceberg/restserver/pom.xml) into
# ~/.cache/connectd/iceberg-rest/lib on first use. Listens on PORT until killed.
set -euo pipefail
port=${1:?port}; wh=${2:?warehouse dir}; db=${3:?catalog db}
here=$(cd "$(dirname "$0")" && pwd)
lib="$HOME/.cache/connectd/iceberg-rest/lib"
if [ ! -f "$lib/.complete" ]; then
  mkdir -p "$lib"
  exec 9>"$lib.lock"
  flock 9
  if [ ! -f "$lib/.complete" ]; then
    mvn -q -B -f "$here/../testdata/iceberg/restserver/pom.xml" dependency:copy-dependencies -DoutputDirectory="$lib" >&2
    touch "$lib/.complete"
  fi
  flock -u 9
fi
mkdir -p "$wh"
export CATALOG_REST_PORT="$port" CATALOG_WAREHOUSE="file://$wh" CATALOG_URI="jdbc:sqlite:file:$db"
exec java -Xmx512m -cp "$lib/*" org.apache.iceberg.rest.RESTCatalogServer
