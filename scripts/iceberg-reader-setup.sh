#!/usr/bin/env bash
# Installs the independent Iceberg reader (DuckDB + iceberg/avro/httpfs extensions from PyPI)
# and the S3-compatible test server (moto server, PyPI) into a cached venv.
# Prints the venv's python path. Idempotent; safe to call from tests.
set -euo pipefail
DUCKDB_VERSION=1.5.5
MOTO_VERSION=5.2.1
VENV="${CONNECTD_ICEBERG_VENV:-$HOME/.cache/connectd/iceberg-venv}"
STAMP="$VENV/.connectd-$DUCKDB_VERSION-$MOTO_VERSION"
if [ ! -f "$STAMP" ]; then
  mkdir -p "$(dirname "$VENV")"
  exec 9>"$VENV.lock"
  flock 9
  if [ ! -f "$STAMP" ]; then
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" >&2
    "$VENV/bin/pip" install -q --disable-pip-version-check \
      "duckdb==$DUCKDB_VERSION" "duckdb-extension-iceberg==$DUCKDB_VERSION" \
      "duckdb-extension-avro==$DUCKDB_VERSION" "duckdb-extension-httpfs==$DUCKDB_VERSION" \
      "moto[server]==$MOTO_VERSION" >&2
    touch "$STAMP"
  fi
fi
echo "$VENV/bin/python"
