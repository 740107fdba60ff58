package reconcile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// lakeWithRows creates an Iceberg table shaped like the CDC sink's current-state table (id, name, qty,
// updated_at, email, _cdc_version) holding n rows, appended in batches.
func lakeWithRows(b *testing.B, n int) map[string]string {
	dir := b.TempDir()
	props := map[string]string{"type": "sql", "uri": "jdbc:sqlite:" + filepath.Join(dir, "catalog.db"), "warehouse": filepath.Join(dir, "wh")}
	ctx := context.Background()
	cat, err := catalogx.Open(ctx, "", props)
	require.NoError(b, err)
	require.NoError(b, cat.CreateNamespace(ctx, catalog.ToIdentifier("cdc"), nil))
	sc := ice.NewSchemaWithIdentifiers(0, []int{1},
		ice.NestedField{ID: 1, Name: "id", Type: ice.StringType{}, Required: true},
		ice.NestedField{ID: 2, Name: "name", Type: ice.StringType{}},
		ice.NestedField{ID: 3, Name: "qty", Type: ice.Int64Type{}},
		ice.NestedField{ID: 4, Name: "updated_at", Type: ice.Int64Type{}},
		ice.NestedField{ID: 5, Name: "email", Type: ice.StringType{}},
		ice.NestedField{ID: 6, Name: "_cdc_version", Type: ice.StringType{}})
	tbl, err := cat.CreateTable(ctx, catalog.ToIdentifier("cdc.customers"), sc)
	require.NoError(b, err)
	as := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "updated_at", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "email", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "_cdc_version", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	const chunk = 250_000
	for start := 0; start < n; start += chunk {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for i := start; i < min(n, start+chunk); i++ {
			bld.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("key-%09d", i))
			bld.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("customer %d Zoë", i))
			bld.Field(2).(*array.Int64Builder).Append(int64(i % 1000))
			bld.Field(3).(*array.Int64Builder).Append(1_700_000_000_000 + int64(i))
			if i%3 == 0 {
				bld.Field(4).AppendNull()
			} else {
				bld.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("c%d@example.com", i))
			}
			v := strconv.Itoa(1000 + i)
			bld.Field(5).(*array.StringBuilder).Append(fmt.Sprintf("%02d%s", len(v), v))
		}
		rec := bld.NewRecordBatch()
		bld.Release()
		rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
		require.NoError(b, err)
		tbl, err = tbl.Append(ctx, rdr, nil)
		rdr.Release()
		rec.Release()
		require.NoError(b, err)
	}
	out := map[string]string{"iceberg.table": "cdc.customers"}
	for k, v := range props {
		out["iceberg.catalog."+k] = v
	}
	return out
}

// BenchmarkRebuild measures a whole-table rebuild from Iceberg into ClickHouse (scan with deletes
// applied, conversion, the ClickHouse sink's mapping, native-protocol inserts into the engine, EXCHANGE
// TABLES) and a reconcile of the result. REBUILD_ROWS sets the table size (default 200000). The engine
// (chDB) and its test server run in this process, so CPU-s include the ClickHouse side.
func BenchmarkRebuild(b *testing.B) {
	n := 200_000
	if v := os.Getenv("REBUILD_ROWS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	props := lakeWithRows(b, n)
	s, srv := clickhouseEngine(b)
	db := chdbtest.Database(b)
	chdbtest.MustExec(b, s, "CREATE TABLE "+db+`.customers (id String, name String, qty Int64, updated_at Int64,
		email Nullable(String), _version UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id`)
	for k, v := range map[string]string{"clickhouse.hostname": "127.0.0.1", "clickhouse.port": fmt.Sprint(srv.Port()),
		"clickhouse.database": db, "clickhouse.table": "customers"} {
		props[k] = v
	}
	cfg, err := ParseConfig(props)
	require.NoError(b, err)
	opt, err := ParseRebuildOptions(props)
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cpu0, t0 := cpuSeconds(), time.Now()
		res, err := Rebuild(context.Background(), cfg, opt, nil)
		require.NoError(b, err)
		require.Equal(b, int64(n), res.Rows)
		el, cpu := time.Since(t0).Seconds(), cpuSeconds()-cpu0
		b.ReportMetric(float64(n)/el, "rebuild-rows/s")
		b.ReportMetric(cpu/float64(n)*1e6, "rebuild-CPU-s/Mrows")
		cpu0, t0 = cpuSeconds(), time.Now()
		r, err := Run(context.Background(), cfg)
		require.NoError(b, err)
		require.Equal(b, StatusClean, r.Status)
		el, cpu = time.Since(t0).Seconds(), cpuSeconds()-cpu0
		b.ReportMetric(float64(2*n)/el, "reconcile-rows/s")
		b.ReportMetric(cpu/float64(2*n)*1e6, "reconcile-CPU-s/Mrows")
	}
}
