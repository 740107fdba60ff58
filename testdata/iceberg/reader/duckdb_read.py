#!/usr/bin/env python3
"""Independent Iceberg reader for connectd's tests: DuckDB + its iceberg extension (PyPI).

Usage: duckdb_read.py METADATA_JSON_LOCATION [--s3-endpoint URL --s3-key K --s3-secret S --s3-region R]
       [--query SQL]   (SQL may reference the table as t)
Prints one JSON object: {"columns": [...], "rows": [[...], ...]}.

The extensions are loaded from the duckdb-extension-* wheels (no download from DuckDB's
extension host, which is unreachable here).
"""
import argparse, datetime, decimal, glob, json, os, sys, uuid

import duckdb


def ext_path(name):
    import importlib
    mod = importlib.import_module("duckdb_extension_" + name)
    hits = glob.glob(os.path.join(os.path.dirname(mod.__file__), "extensions", "*", name + ".duckdb_extension"))
    if not hits:
        raise SystemExit("extension %s not found in its wheel" % name)
    return hits[0]


def q(s):
    return "'" + str(s).replace("'", "''") + "'"


def qi(name):
    return '"' + name.replace('"', '""') + '"'


def conv(v):
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return {k: conv(x) for k, x in v.items()}
    if isinstance(v, list):
        return [conv(x) for x in v]
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metadata")
    ap.add_argument("--s3-endpoint")
    ap.add_argument("--s3-key")
    ap.add_argument("--s3-secret")
    ap.add_argument("--s3-region", default="us-east-1")
    ap.add_argument("--query", default="SELECT * FROM t")
    a = ap.parse_args()
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for e in ("avro", "iceberg"):
        con.execute("LOAD '%s'" % ext_path(e))
    if a.s3_endpoint:
        con.execute("LOAD '%s'" % ext_path("httpfs"))
        ep = a.s3_endpoint.replace("http://", "").replace("https://", "")
        con.execute(
            "CREATE SECRET s3sec (TYPE s3, KEY_ID %s, SECRET %s, REGION %s, ENDPOINT %s, URL_STYLE 'path', USE_SSL %s)"
            % (q(a.s3_key), q(a.s3_secret), q(a.s3_region), q(ep), "true" if a.s3_endpoint.startswith("https") else "false")
        )
    loc = a.metadata
    if loc.startswith("file://"):
        loc = loc[len("file://"):]
    elif loc.startswith("file:"):
        loc = loc[len("file:"):]
    con.execute("CREATE VIEW t AS SELECT * FROM iceberg_scan(%s)" % q(loc))
    cur = con.execute(a.query)
    # TIMESTAMPTZ values need pytz to become Python objects: read those columns as their text instead
    tz = [d[0] for d in cur.description if str(d[1]) == "TIMESTAMP WITH TIME ZONE"]
    if tz:
        repl = ", ".join("CAST(%s AS VARCHAR) AS %s" % ((qi(c),) * 2) for c in tz)
        cur = con.execute("SELECT * REPLACE (%s) FROM (%s) AS q" % (repl, a.query))
    cols = [d[0] for d in cur.description]
    rows = [[conv(v) for v in r] for r in cur.fetchall()]
    json.dump({"columns": cols, "rows": rows}, sys.stdout)


if __name__ == "__main__":
    main()
