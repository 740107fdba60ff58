#!/usr/bin/env bash
# The CDC model test's Iceberg tables read by Trino (make test-trino): a private PostgreSQL holds the sink's JDBC
# catalog (database lake), Trino's server (scripts/trino.sh) reads it as its catalog "iceberg", and
# TestCDCModelIcebergTrino runs against a real Kafka broker (scripts/with-kafka.sh). Everything is stopped at exit.
# Extra arguments go to go test. CDC_SEED, CDC_STREAMS and the other CDC_* parameters pass through.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
work=$(mktemp -d "${TMPDIR:-/tmp}/connectd-trino.XXXXXX")
chmod 755 "$work" # the PostgreSQL server runs as the postgres user
cleanup() {
  "$here/trino.sh" stop "$work/trino" || true
  "$here/iceberg-postgres.sh" stop "$work/pg" || true
  rm -rf "$work"
}
trap cleanup EXIT
pg_port=$(free_port)
"$here/iceberg-postgres.sh" start "$work/pg" "$pg_port" lake
# the sink's catalog name (iceberg.catalog) is iceberg, the default
cat >"$work/iceberg.properties" <<EOF
connector.name=iceberg
iceberg.catalog.type=jdbc
iceberg.jdbc-catalog.catalog-name=iceberg
iceberg.jdbc-catalog.driver-class=org.postgresql.Driver
iceberg.jdbc-catalog.connection-url=jdbc:postgresql://127.0.0.1:$pg_port/lake
iceberg.jdbc-catalog.connection-user=postgres
iceberg.jdbc-catalog.connection-password=
iceberg.jdbc-catalog.default-warehouse-dir=$work/warehouse
fs.native-local.enabled=true
local.location=/
EOF
trino_url=$("$here/trino.sh" start "$work/trino" "$(free_port)" "$work/iceberg.properties")
echo "test-trino: Trino at $trino_url, catalog database jdbc:postgresql://127.0.0.1:$pg_port/lake" >&2
cd "$root"
CDC_TRINO_URL=$trino_url CDC_TRINO_CATALOG=iceberg \
  CDC_ICEBERG_CATALOG_URI="jdbc:postgresql://127.0.0.1:$pg_port/lake" CDC_ICEBERG_CATALOG_USER=postgres \
  "$here/with-kafka.sh" go test -count=1 -timeout 90m -v -run '^TestCDCModelIcebergTrino$' ./test/cdcmodel/ "$@"
