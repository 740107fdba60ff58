package icebergtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
)

// duckFileRows reads a Parquet file's columns in the file's row order with DuckDB (file_row_number).
const duckFileRows = `
import duckdb, json, sys
path, cols = sys.argv[1], sys.argv[2].split(",")
con = duckdb.connect()
sel = ", ".join('CAST("%s" AS VARCHAR)' % c for c in cols)
rows = con.execute("SELECT %s FROM read_parquet(?, file_row_number=true) ORDER BY file_row_number" % sel, [path]).fetchall()
json.dump([list(r) for r in rows], sys.stdout)
`

// FileRows reads the given columns of one Parquet file (a local path) with DuckDB, in the file's row
// order, every value as text (null as nil). No Iceberg delete is applied.
func FileRows(t testing.TB, path string, columns string) [][]*string {
	t.Helper()
	cmd := exec.Command(Python(t), "-c", duckFileRows, path, columns)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb file read failed: %v\n%s", err, stderr.String())
	}
	var rows [][]*string
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb file read output: %v: %s", err, out)
	}
	return rows
}
