#!/usr/bin/env bash
# Query an Iceberg table of the sink's catalog with DuckDB's iceberg extension (from PyPI).
#   scripts/iceberg-query.sh CATALOG NAMESPACE.TABLE 'SELECT ... FROM t'
# CATALOG is the sink's iceberg.catalog.uri, or a path to a SQLite catalog file:
#   /path/catalog.db, jdbc:sqlite:/path/catalog.db        SQL (JDBC) catalog in SQLite
#   jdbc:postgresql://HOST:PORT/DB                         SQL (JDBC) catalog in PostgreSQL, through psql; the user
#                                                          and password from PGUSER/PGPASSWORD (or ?user=&password=)
#   http://HOST:PORT[/PATH], https://...                   REST catalog (ICEBERG_REST_TOKEN: a bearer token,
#                                                          ICEBERG_WAREHOUSE: the warehouse to ask /v1/config for)
# ICEBERG_CATALOG_NAME restricts a SQL catalog to the rows of that catalog name (the sink's iceberg.catalog), for a
# database that several catalogs share. The table is visible as `t`. Prints JSON ({"columns": [...], "rows": [...]}).
# Files are read from the local file system (file: warehouses).
set -euo pipefail
cat=${1:?catalog: a SQLite file, jdbc:sqlite:PATH, jdbc:postgresql://HOST:PORT/DB or a REST catalog URI}
ident=${2:?namespace.table}; sql=${3:-SELECT * FROM t}
here=$(cd "$(dirname "$0")" && pwd)
py=$(bash "$here/iceberg-reader-setup.sh")
ns=${ident%.*}; tbl=${ident##*.}
name=${ICEBERG_CATALOG_NAME:-}
missing="no table $ns.$tbl in $cat (has the sink committed yet?)"
case "$cat" in
jdbc:postgresql:*)
  url=${cat#jdbc:}
  command -v psql >/dev/null || { echo "iceberg-query.sh: needs psql (Debian: apt-get install postgresql-client)" >&2; exit 1; }
  meta=$(psql "$url" -X -q -t -A -v ON_ERROR_STOP=1 -v ns="$ns" -v tbl="$tbl" -v name="$name" <<'SQL'
SELECT metadata_location FROM iceberg_tables
WHERE table_namespace = :'ns' AND table_name = :'tbl' AND (:'name' = '' OR catalog_name = :'name')
SQL
  )
  [ -n "$meta" ] || { echo "$missing" >&2; exit 1; }
  [ "$(wc -l <<<"$meta")" = 1 ] || { echo "$ns.$tbl is in several catalogs of $cat: set ICEBERG_CATALOG_NAME" >&2; exit 1; }
  ;;
http://* | https://*)
  meta=$("$py" - "$cat" "$ns" "$tbl" <<'PY'
import json, os, sys, urllib.error, urllib.parse, urllib.request
uri, ns, tbl = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
headers = {"Accept": "application/json"}
if os.environ.get("ICEBERG_REST_TOKEN"):
    headers["Authorization"] = "Bearer " + os.environ["ICEBERG_REST_TOKEN"]
def get(path):
    req = urllib.request.Request(uri + path, headers=headers)
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)
q = "?warehouse=" + urllib.parse.quote(os.environ["ICEBERG_WAREHOUSE"], safe="") if os.environ.get("ICEBERG_WAREHOUSE") else ""
conf = get("/v1/config" + q)
prefix = {**conf.get("defaults", {}), **conf.get("overrides", {})}.get("prefix")
base = "/v1/" + (urllib.parse.quote(prefix, safe="") + "/" if prefix else "")
try:
    t = get(base + "namespaces/%s/tables/%s" % (urllib.parse.quote("\x1f".join(ns.split(".")), safe=""), urllib.parse.quote(tbl, safe="")))
except urllib.error.HTTPError as e:
    sys.exit("no table %s.%s in %s (has the sink committed yet?): HTTP %d" % (ns, tbl, uri, e.code) if e.code == 404 else "REST catalog %s: %s" % (uri, e))
print(t["metadata-location"])
PY
  )
  ;;
*)
  db=${cat#jdbc:sqlite:}; db=${db#file:}
  [ -f "$db" ] || { echo "iceberg-query.sh: $cat: no such SQLite catalog file (or an unknown catalog URI)" >&2; exit 1; }
  meta=$("$py" - "$db" "$ns" "$tbl" "$name" <<'PY'
import sqlite3, sys
db, ns, tbl, name = sys.argv[1:]
con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
rows = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace=? AND table_name=? AND (?='' OR catalog_name=?)",
                   (ns, tbl, name, name)).fetchall()
if not rows:
    sys.exit("no table %s.%s in %s (has the sink committed yet?)" % (ns, tbl, db))
if len(rows) > 1:
    sys.exit("%s.%s is in several catalogs of %s: set ICEBERG_CATALOG_NAME" % (ns, tbl, db))
print(rows[0][0])
PY
  )
  ;;
esac
exec "$py" "$here/../testdata/iceberg/reader/duckdb_read.py" "$meta" --query "$sql"
