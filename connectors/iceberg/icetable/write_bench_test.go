package icetable_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// benchShapeSchema is the Iceberg sink benchmark's record (internal/benchtools/produce -json) as the
// schemaless converter infers it.
var benchShapeSchema = ice.NewSchema(0,
	ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64},
	ice.NestedField{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
	ice.NestedField{ID: 3, Name: "email", Type: ice.PrimitiveTypes.String},
	ice.NestedField{ID: 4, Name: "region", Type: ice.PrimitiveTypes.String},
	ice.NestedField{ID: 5, Name: "amount", Type: ice.PrimitiveTypes.Float64},
	ice.NestedField{ID: 6, Name: "qty", Type: ice.PrimitiveTypes.Int64},
	ice.NestedField{ID: 7, Name: "ts", Type: ice.PrimitiveTypes.String},
	ice.NestedField{ID: 8, Name: "version", Type: ice.PrimitiveTypes.Int64},
	ice.NestedField{ID: 9, Name: "note", Type: ice.PrimitiveTypes.String},
)

// benchShapeBatches builds rows [from, from+n) of the benchmark's records in batches of 4096 rows
// (WRITE_BENCH_BATCH rows when set).
func benchShapeBatches(asc *arrow.Schema, from, n int) []arrow.RecordBatch {
	per := 4096
	if v, err := strconv.Atoi(os.Getenv("WRITE_BENCH_BATCH")); err == nil && v > 0 {
		per = v
	}
	regions := []string{"eu-west", "us-east", "ap-south"}
	pad := make([]byte, 300)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	note := string(pad[:254])
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []arrow.RecordBatch
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("customer-%07d", i%1000000))
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("customer-%07d@example.com", i%1000000))
		b.Field(3).(*array.StringBuilder).Append(regions[i%3])
		b.Field(4).(*array.Float64Builder).Append(float64(i%100000) + float64(i%100)/100)
		b.Field(5).(*array.Int64Builder).Append(int64(i % 17))
		b.Field(6).(*array.StringBuilder).Append(base.Add(time.Duration(i) * time.Second).Format(time.RFC3339))
		b.Field(7).(*array.Int64Builder).Append(int64(i % 5))
		b.Field(8).(*array.StringBuilder).Append(note)
		if (i-from+1)%per == 0 || i == from+n-1 {
			out = append(out, b.NewRecordBatch())
		}
	}
	return out
}

func rusageCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDataFileWrite: the benchmark's records, built already, into one data file of an
// unpartitioned table as the interval's writer writes them (writeDataFiles, row groups of 32,768
// rows, one batch queued): Parquet encoding, compression and the file's metrics. cpu-ns/row is the
// process's CPU per row, B/row the file's size per row. To compare settings, WRITE_BENCH_PROPS
// (k=v,...) sets table properties and WRITE_BENCH_BATCH the rows of a batch.
func BenchmarkDataFileWrite(b *testing.B) {
	const rows = 262_144
	cat := sqliteCatalog(b)
	ctx := context.Background()
	props := ice.Properties{}
	for kv := range strings.SplitSeq(os.Getenv("WRITE_BENCH_PROPS"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			props[k] = v
		}
	}
	require.NoError(b, cat.CreateNamespace(ctx, table.Identifier{"bench"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"bench", "write"}, benchShapeSchema, catalog.WithProperties(props))
	require.NoError(b, err)
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(b, err)
	batches := benchShapeBatches(asc, 0, rows)
	var size int64
	cpu0 := rusageCPU()
	b.ResetTimer()
	for range b.N {
		for _, bt := range batches {
			bt.Retain()
		}
		src := func(yield func(arrow.RecordBatch, error) bool) {
			for _, bt := range batches {
				if !yield(bt, nil) {
					return
				}
			}
		}
		for df, err := range icetable.WriteDataFilesOfRowGroups(32<<10)(ctx, tbl, asc, src) {
			require.NoError(b, err)
			size += df.FileSizeBytes()
			require.NoError(b, os.Remove(strings.TrimPrefix(df.FilePath(), "file://")))
		}
	}
	b.StopTimer()
	n := float64(b.N) * rows
	b.ReportMetric(float64(rusageCPU()-cpu0)/n, "cpu-ns/row")
	b.ReportMetric(float64(size)/n, "B/row")
}
