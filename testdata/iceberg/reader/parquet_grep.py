#!/usr/bin/env python3
"""Which Parquet files hold a value, read with DuckDB (read_parquet: no Iceberg delete is applied).

Usage: parquet_grep.py VALUE FILE...
A cell (every column is read as text) holds VALUE when it is VALUE or contains it as a JSON string
("VALUE", JSON-escaped), as the raw CDC history's payload columns do. Prints one JSON object
{FILE: number of rows holding VALUE} with every file named.
"""
import json, os, sys

import duckdb


def holds(row, value, quoted):
    return any(v is not None and (v == value or any(q in v for q in quoted)) for v in row)


def main():
    value, files = sys.argv[1], sys.argv[2:]
    quoted = {json.dumps(value, ensure_ascii=False), json.dumps(value)}
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    out = {}
    for f in files:
        path = f
        for p in ("file://", "file:"):
            if path.startswith(p):
                path = path[len(p):]
                break
        if not os.path.exists(path):
            raise SystemExit("%s: no such file" % f)
        # as text: no Python conversion of timestamps with time zones (which needs pytz)
        rows = con.execute("SELECT COLUMNS(*)::VARCHAR FROM read_parquet(?)", [path]).fetchall()
        out[f] = sum(1 for r in rows if holds(r, value, quoted))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
