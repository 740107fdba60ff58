package icebergtest

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// SQLiteCatalog opens a JDBC (SQLite) catalog with its warehouse in a temporary directory of t.
func SQLiteCatalog(t testing.TB) catalog.Catalog {
	t.Helper()
	return SQLiteCatalogIn(t, t.TempDir())
}

// SQLiteCatalogIn opens a JDBC (SQLite) catalog with its database and warehouse in dir.
func SQLiteCatalogIn(t testing.TB, dir string) catalog.Catalog {
	t.Helper()
	cat, err := catalogx.Open(context.Background(), "test", map[string]string{
		"catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
		"uri":          "jdbc:sqlite:" + filepath.Join(dir, "catalog.db"),
		"warehouse":    filepath.Join(dir, "warehouse"),
	})
	require.NoError(t, err)
	return cat
}

// CustomerSchema is the record schema of the keyed table tests.
var CustomerSchema = &ice.StructType{FieldList: []ice.NestedField{
	{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
	{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
	{ID: 3, Name: "ts", Type: ice.PrimitiveTypes.TimestampTz},
	{ID: 4, Name: "version", Type: ice.PrimitiveTypes.Int64},
}}

// ScanRows reads the table with iceberg-go (deletes applied), as a second reader.
func ScanRows(t testing.TB, tbl *table.Table) []icerow.Row {
	t.Helper()
	_, it, err := tbl.Scan().ToArrowRecords(context.Background())
	require.NoError(t, err)
	var out []icerow.Row
	for rec, err := range it {
		require.NoError(t, err)
		out = append(out, icerow.RecordToRows(rec)...)
		rec.Release()
	}
	return out
}

// DuckRows runs query over the table at metadata with the independent reader (DuckDB): its rows as
// sorted "a|b|c" lines.
func DuckRows(t testing.TB, metadata, query string) []string {
	res := Read(t, metadata, query, nil)
	var out []string
	for _, r := range res.Rows {
		s := ""
		for i, v := range r {
			if i > 0 {
				s += "|"
			}
			s += fmt.Sprint(v)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
