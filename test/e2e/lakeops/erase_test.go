package lakeops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/lakepipeline"
	"github.com/connectd/connectd/internal/testutil/workerproc"
	"github.com/connectd/connectd/lakeops/erase"
	"github.com/connectd/connectd/lakeops/reconcile"
)

// parquetFiles lists every Parquet file in the warehouse, referenced by a table or not.
func parquetFiles(t *testing.T, dir string) []string {
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	}))
	return out
}

// holding lists the files (of all) that physically hold value, read with DuckDB (no delete applied).
func holding(t *testing.T, value string, files []string) []string {
	var out []string
	for f, n := range icebergtest.FilesHolding(t, value, files) {
		if n > 0 {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// TestEraseEndToEnd erases two keys of a running pipeline with `connectd erase`: one deleted at the
// source before (its values hidden by deletes but stored in the current table's data and delete files,
// its <table>__deletes row, its history rows and its ClickHouse parts) and one still live. Afterwards no
// Parquet file anywhere in the warehouse (live, of an older snapshot, or unreferenced) holds either key,
// read straight from the files with DuckDB; no ClickHouse part a query reads holds them; the other keys
// are intact and reconcile is clean.
func TestEraseEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	rng := rand.New(rand.NewSource(lakepipeline.Seed(t)))
	p := lakepipeline.New(t)
	p.Start()
	p.Produce(rng, 30)
	p.Wait()
	var keys []string
	for k := range p.Model() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	deleted, live := keys[len(keys)/3], keys[2*len(keys)/3]
	p.Delete(deleted)
	p.Wait()
	p.Stop()
	liveRows := len(p.Model()) - 1 // live is erased below

	// An SCD Type 2 table of the keys: two versions of each erased key, one of another key.
	other := keys[0]
	scd := "cdc.customers_scd"
	scdTable(t, p, scd, fmt.Sprintf(`[{"business_key":%q,"name":"a","valid_from":1,"is_current":false},
		{"business_key":%q,"name":"b","valid_from":2,"is_current":true},
		{"business_key":%q,"name":"c","valid_from":1,"is_current":false},
		{"business_key":%q,"name":"d","valid_from":2,"is_current":true},
		{"business_key":%q,"name":"e","valid_from":1,"is_current":true}]`, deleted, deleted, live, live, other))

	before := parquetFiles(t, p.WH)
	for _, k := range []string{deleted, live} {
		require.NotEmpty(t, holding(t, k, before), "files hold %s before the erase", k)
		require.NotEqual(t, "0", chdbtest.MustQuery(t, p.S, "SELECT count() FROM "+p.DB+".customers WHERE id = '"+k+"'"))
	}

	args := []string{"erase", "-format", "json", "-key", deleted, "-key", live}
	for k, v := range p.Props() {
		args = append(args, k+"="+v)
	}
	args = append(args, erase.KeyHistoryTables+"="+lakepipeline.History, erase.KeySCDTables+"="+scd)
	cmd := exec.Command(workerproc.Binary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("erase record:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	require.NoError(t, err)
	var rec erase.Record
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rec))
	require.Equal(t, erase.VerdictErased, rec.Verdict, rec.Problems)
	roles := map[string]*erase.TableErasure{}
	for _, te := range rec.Iceberg {
		roles[te.Role] = te
		require.Empty(t, te.Error, te.Table)
		require.Empty(t, te.Remaining, te.Table)
		require.NotEmpty(t, te.HeldBefore, "%s held a key", te.Table)
		require.Positive(t, te.FilesRead, te.Table)
		require.Equal(t, 1, te.Maintenance.After.Snapshots, "%s: one snapshot left", te.Table)
	}
	require.Len(t, roles, 4, "current, deletes, history and SCD tables")
	require.Equal(t, int64(4), roles[erase.RoleSCD].RowsDeleted, "the erased keys' SCD versions")
	require.Equal(t, int64(1), roles[erase.RoleCurrent].RowsDeleted, "the live key's row")
	require.GreaterOrEqual(t, roles[erase.RoleDeletes].RowsDeleted, int64(1), "the deleted key's tombstone (and the live key's, if it was deleted and inserted again)")
	require.Positive(t, roles[erase.RoleHistory].RowsDeleted)
	require.NotNil(t, rec.ClickHouse)
	require.Positive(t, rec.ClickHouse.RowsBefore)
	require.Zero(t, rec.ClickHouse.RowsAfter)
	var where []string
	for _, u := range rec.Unreached {
		where = append(where, u.Where)
	}
	require.Contains(t, where, "kafka topic "+p.Topic)

	// Read the files themselves: nothing in the warehouse holds either key any more.
	after := parquetFiles(t, p.WH)
	require.NotEmpty(t, after)
	for _, k := range []string{deleted, live} {
		require.Empty(t, holding(t, k, after), "files holding %s after the erase", k)
		require.Equal(t, "0", chdbtest.MustQuery(t, p.S, "SELECT count() FROM "+p.DB+".customers WHERE id = '"+k+"'"), "ClickHouse rows of %s (no FINAL: every active part)", k)
	}
	// The other keys are intact in every table.
	res := icebergtest.Read(t, p.Table(scd).MetadataLocation(), "SELECT business_key AS k FROM t", nil)
	require.Len(t, res.Maps(), 1)
	require.Equal(t, other, fmt.Sprint(res.Maps()[0]["k"]), "the SCD row of the other key")
	res = icebergtest.Read(t, p.Table(lakepipeline.Current).MetadataLocation(), "SELECT count(*) AS n FROM t", nil)
	require.Equal(t, fmt.Sprint(liveRows), fmt.Sprint(res.Maps()[0]["n"]), "Iceberg rows of the other keys")
	props := p.Props()
	props[reconcile.KeyCHGroup] = p.CHGroup()
	cfg, err := reconcile.ParseConfig(props)
	require.NoError(t, err)
	r, err := reconcile.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, reconcile.StatusClean, r.Status)
	require.EqualValues(t, liveRows, r.Iceberg.Rows)
	require.EqualValues(t, liveRows, r.ClickHouse.Rows)
}

// scdTable creates an SCD Type 2 table with the rows (JSON).
func scdTable(t *testing.T, p *lakepipeline.Pipeline, name, rows string) {
	ctx := context.Background()
	sc := ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "business_key", Type: ice.PrimitiveTypes.String, Required: true},
		ice.NestedField{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
		ice.NestedField{ID: 3, Name: "valid_from", Type: ice.PrimitiveTypes.Int64},
		ice.NestedField{ID: 4, Name: "is_current", Type: ice.PrimitiveTypes.Bool})
	tbl, err := p.Catalog().CreateTable(ctx, catalog.ToIdentifier(name), sc)
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	require.NoError(t, err)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, asc, strings.NewReader(rows))
	require.NoError(t, err)
	defer rec.Release()
	at := array.NewTableFromRecords(asc, []arrow.RecordBatch{rec})
	defer at.Release()
	_, err = tbl.AppendTable(ctx, at, 1024, nil)
	require.NoError(t, err)
}
