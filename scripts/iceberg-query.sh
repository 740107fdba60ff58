#!/usr/bin/env bash
# Query an Iceberg table of a SQL (SQLite) catalog with DuckDB's iceberg extension (from PyPI).
#   scripts/iceberg-query.sh CATALOG_DB NAMESPACE.TABLE 'SELECT ... FROM t'
# The table is visible as `t`. Prints JSON ({"columns": [...], "rows": [...]}).
set -euo pipefail
db=${1:?catalog.db}; ident=${2:?namespace.table}; sql=${3:-SELECT * FROM t}
here=$(cd "$(dirname "$0")" && pwd)
py=$(bash "$here/iceberg-reader-setup.sh")
ns=${ident%.*}; tbl=${ident##*.}
meta=$("$py" - "$db" "$ns" "$tbl" <<'PY'
import sqlite3, sys
db, ns, tbl = sys.argv[1:]
con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
row = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace=? AND table_name=?", (ns, tbl)).fetchone()
if not row:
    sys.exit("no table %s.%s in %s (has the sink committed yet?)" % (ns, tbl, db))
print(row[0])
PY
)
exec "$py" "$here/../testdata/iceberg/reader/duckdb_read.py" "$meta" --query "$sql"
