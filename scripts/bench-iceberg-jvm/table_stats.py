"""Prints the current snapshot of a table in a SQL catalog as one JSON line:
{"records": total-records, "snapshots": n, "data_files": total-data-files}; records is 0 before the first commit.
Usage: table_stats.py CATALOG_DB NAMESPACE TABLE    (a SQLite catalog file)
       table_stats.py --metadata LOCATION           (a table's metadata file, "" before the table exists)"""
import json
import os
import sqlite3
import sys

out = {"records": 0, "snapshots": 0, "data_files": 0}
if sys.argv[1] == "--metadata":
    row = (sys.argv[2],) if sys.argv[2] else None
else:
    db, ns, tbl = sys.argv[1:]
    try:
        # a rollback-journal database (the JVM's): read it as immutable, taking no lock, so that polling never makes
        # the sink's catalog commit fail with SQLITE_BUSY; a WAL database (connectd's) needs the WAL read, never blocks
        immutable = "" if os.path.exists(db + "-wal") else "&immutable=1"
        con = sqlite3.connect("file:%s?mode=ro%s" % (db, immutable), uri=True, timeout=5)
        row = con.execute(
            "SELECT metadata_location FROM iceberg_tables WHERE table_namespace=? AND table_name=?", (ns, tbl)
        ).fetchone()
    except sqlite3.Error:
        row = None
if row:
    path = row[0]
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            path = path[len(prefix):]
            break
    meta = json.load(open(path))
    snaps = meta.get("snapshots") or []
    cur = [s for s in snaps if s.get("snapshot-id") == meta.get("current-snapshot-id")]
    out["snapshots"] = len(snaps)
    if cur:
        summary = cur[0].get("summary", {})
        out["records"] = int(summary.get("total-records", 0))
        out["data_files"] = int(summary.get("total-data-files", 0))
print(json.dumps(out))
