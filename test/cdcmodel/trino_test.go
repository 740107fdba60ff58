package cdcmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestCDCModelIcebergTrino: the CDC model test's Iceberg tables in a PostgreSQL catalog, read by a running Trino
// as well as by DuckDB and Iceberg Java. Trino's rows of the upsert tables must equal the model; for every table
// (the raw history too) Trino's columns, their types and its row set must equal DuckDB's.
//
// Skipped unless CDC_TRINO_URL names the Trino server (make test-trino starts one): its catalog CDC_TRINO_CATALOG
// (default iceberg) is an Iceberg JDBC catalog on the database CDC_ICEBERG_CATALOG_URI
// (jdbc:postgresql://host:port/db, user CDC_ICEBERG_CATALOG_USER), which holds no cdc namespace yet.
func TestCDCModelIcebergTrino(t *testing.T) {
	url := os.Getenv("CDC_TRINO_URL")
	if url == "" {
		t.Skip("CDC_TRINO_URL names no running Trino server (make test-trino starts one)")
	}
	uri := os.Getenv("CDC_ICEBERG_CATALOG_URI")
	require.True(t, strings.HasPrefix(uri, "jdbc:postgresql://"),
		"CDC_ICEBERG_CATALOG_URI=%q: Trino reads the sink's tables through a PostgreSQL catalog", uri)
	cat := &icebergCatalog{uri: uri, user: os.Getenv("CDC_ICEBERG_CATALOG_USER")}
	tr := trino{url: strings.TrimRight(url, "/"), catalog: os.Getenv("CDC_TRINO_CATALOG")}
	if tr.catalog == "" {
		tr.catalog = "iceberg"
	}
	s := icebergSink(t, false, cat)
	read := func(table string) func(t *testing.T) map[string][]cdcstream.Row {
		return func(t *testing.T) map[string][]cdcstream.Row {
			out := map[string][]cdcstream.Row{}
			for _, m := range tr.query(t, "SELECT * FROM "+tr.table(table)).Maps() {
				r := rowFromJSON(t, m)
				out[r.ID] = append(out[r.ID], r)
			}
			return out
		}
	}
	s.views = append(s.views,
		view{name: "iceberg cdc.by_lsn (version source.lsn) via Trino", table: "by_lsn", version: cdcstream.VersionLSN, read: read("by_lsn")},
		view{name: "iceberg cdc.by_lsn_flat (version source.lsn, unpartitioned) via Trino", table: "by_lsn_flat", version: cdcstream.VersionLSN, read: read("by_lsn_flat")},
		view{name: "iceberg cdc.by_updated_at (version updated_at) via Trino", table: "by_updated_at", version: cdcstream.VersionColumn, read: read("by_updated_at")},
	)
	whole := s.wholeRun
	s.wholeRun = func(t *testing.T, records int64) {
		whole(t, records)
		for _, table := range []string{"by_lsn", "by_lsn_flat", "by_updated_at", "history"} {
			trinoAgreesWithDuckDB(t, tr, table, cat.metadataLocation(t, table))
		}
	}
	runModel(t, s, false)
}

// trinoAgreesWithDuckDB compares one table as Trino and DuckDB read it: the same columns in the same order, each of
// the Trino type that DuckDB's type maps to, and the same rows (as a multiset).
func trinoAgreesWithDuckDB(t *testing.T, tr trino, table, metadataLocation string) {
	got := tr.query(t, "SELECT * FROM "+tr.table(table))
	desc := icebergtest.Read(t, metadataLocation, "DESCRIBE SELECT * FROM t", nil).Maps()
	duckTypes := make([]string, len(desc))
	for i, m := range desc {
		duckTypes[i] = fmt.Sprint(m["column_type"])
	}
	want := icebergtest.Read(t, metadataLocation, "SELECT * FROM t", nil)
	require.Equal(t, want.Columns, got.Columns, "cdc.%s: columns, DuckDB and Trino", table)
	for i, dt := range duckTypes {
		tt, ok := trinoTypeOf(dt)
		require.True(t, ok, "cdc.%s column %s: DuckDB type %s has no Trino type in trinoTypeOf", table, want.Columns[i], dt)
		require.Equal(t, tt, got.Types[i], "cdc.%s column %s: Trino's type for DuckDB's %s", table, want.Columns[i], dt)
	}
	canon := func(rows [][]any) []string {
		out := make([]string, len(rows))
		for i, row := range rows {
			cells := make([]string, len(row))
			for j, v := range row {
				cells[j] = canonicalCell(t, got.Types[j], v)
			}
			b, err := json.Marshal(cells)
			require.NoError(t, err)
			out[i] = string(b)
		}
		slices.Sort(out)
		return out
	}
	w, g := canon(want.Rows), canon(got.Rows)
	if !slices.Equal(w, g) {
		var only []string
		for _, r := range w {
			if _, found := slices.BinarySearch(g, r); !found && len(only) < 5 {
				only = append(only, "DuckDB only: "+r)
			}
		}
		for _, r := range g {
			if _, found := slices.BinarySearch(w, r); !found && len(only) < 10 {
				only = append(only, "Trino only: "+r)
			}
		}
		t.Fatalf("cdc.%s: DuckDB reads %d rows, Trino %d, and they differ:\n%s", table, len(w), len(g), strings.Join(only, "\n"))
	}
	t.Logf("cdc.%s: Trino and DuckDB agree on %d columns (%s) and %d rows", table, len(got.Columns),
		strings.Join(got.Types, ", "), len(g))
}

// trinoTypeOf is the Trino type of an Iceberg column that DuckDB reads as duckType (the Iceberg types these tables
// use; Iceberg's timestamps are microseconds, hence precision 6).
func trinoTypeOf(duckType string) (string, bool) {
	switch duckType {
	case "VARCHAR":
		return "varchar", true
	case "BIGINT":
		return "bigint", true
	case "INTEGER":
		return "integer", true
	case "BOOLEAN":
		return "boolean", true
	case "DOUBLE":
		return "double", true
	case "FLOAT":
		return "real", true
	case "DATE":
		return "date", true
	case "TIME":
		return "time(6)", true
	case "TIMESTAMP":
		return "timestamp(6)", true
	case "TIMESTAMP WITH TIME ZONE":
		return "timestamp(6) with time zone", true
	case "BLOB":
		return "varbinary", true
	case "UUID":
		return "uuid", true
	}
	if strings.HasPrefix(duckType, "DECIMAL(") {
		return strings.ToLower(strings.ReplaceAll(duckType, " ", "")), true
	}
	return "", false
}

// canonicalCell renders a value of either reader as one text: timestamps as instants in UTC to the microsecond
// (DuckDB writes "2026-01-02 03:04:05.123456+00", Trino "2026-01-02 03:04:05.123456 UTC"), numbers as written.
func canonicalCell(t *testing.T, trinoType string, v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case string:
		switch trinoType {
		case "timestamp(6) with time zone":
			for _, layout := range []string{"2006-01-02 15:04:05.999999 MST", "2006-01-02 15:04:05.999999Z07", "2006-01-02 15:04:05.999999Z07:00"} {
				if ts, err := time.Parse(layout, x); err == nil {
					return ts.UTC().Format("2006-01-02T15:04:05.000000Z")
				}
			}
			t.Fatalf("timestamp with time zone %q: no known layout", x)
		case "timestamp(6)":
			for _, layout := range []string{"2006-01-02 15:04:05.999999", "2006-01-02T15:04:05.999999"} {
				if ts, err := time.Parse(layout, x); err == nil {
					return ts.Format("2006-01-02T15:04:05.000000")
				}
			}
			t.Fatalf("timestamp %q: no known layout", x)
		}
		return x
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// trino is a Trino server's client protocol (POST /v1/statement, then follow nextUri) and the catalog that reads
// the sink's tables.
type trino struct {
	url, catalog string
}

// trinoResult is a query's columns, their Trino types and its rows (numbers as json.Number).
type trinoResult struct {
	Columns []string
	Types   []string
	Rows    [][]any
}

// Maps returns rows as column->value maps.
func (r trinoResult) Maps() []map[string]any {
	return icebergtest.Result{Columns: r.Columns, Rows: r.Rows}.Maps()
}

func (tr trino) table(name string) string { return fmt.Sprintf(`"%s"."cdc"."%s"`, tr.catalog, name) }

func (tr trino) query(t *testing.T, sql string) trinoResult {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, tr.url+"/v1/statement", strings.NewReader(sql))
	require.NoError(t, err)
	req.Header.Set("X-Trino-User", "connectd-test")
	// without it Trino rounds timestamps to milliseconds and names their types without a precision
	req.Header.Set("X-Trino-Client-Capabilities", "PARAMETRIC_DATETIME")
	var res trinoResult
	for {
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, "Trino %s", tr.url)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		require.Equal(t, http.StatusOK, resp.StatusCode, "Trino: %s", body)
		var page struct {
			NextURI string `json:"nextUri"`
			Columns []struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"columns"`
			Data  [][]any `json:"data"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		require.NoError(t, d.Decode(&page), "Trino's answer: %s", body)
		if page.Error != nil {
			t.Fatalf("Trino: %s: %s", sql, page.Error.Message)
		}
		if res.Columns == nil && page.Columns != nil {
			for _, c := range page.Columns {
				res.Columns = append(res.Columns, c.Name)
				res.Types = append(res.Types, c.Type)
			}
		}
		res.Rows = append(res.Rows, page.Data...)
		if page.NextURI == "" {
			return res
		}
		req, err = http.NewRequest(http.MethodGet, page.NextURI, nil)
		require.NoError(t, err)
		req.Header.Set("X-Trino-User", "connectd-test")
	}
}
