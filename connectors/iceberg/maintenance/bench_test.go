package maintenance

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	iceberg "github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// BenchmarkCompactUpsertStream: 34,000 upserts and deletes over 4,000 keys (and ten times both) whose day(ts)
// partition moves between 3 days, committed by the sink's writer in 7 rounds, then one
// compaction. Reports the live files before and after and the DuckDB read time of the current
// table (a Python process started per read, included) before and after.
//
//	go test -run '^$' -bench CompactUpsertStream -benchtime 1x ./connectors/iceberg/maintenance/
func BenchmarkCompactUpsertStream(b *testing.B) {
	for _, sz := range []struct{ events, keys int }{{34000, 4000}, {340000, 40000}} {
		b.Run(fmt.Sprintf("events=%d/keys=%d", sz.events, sz.keys), func(b *testing.B) { benchCompact(b, sz.events, sz.keys) })
	}
}

func benchCompact(b *testing.B, events, keys int) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cat := sqliteCatalog(b, b.TempDir())
		w := &iceberg.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: iceberg.TableOptions{
			IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
			OffsetsKey: iceberg.OffsetsSummaryKey("connect-bench"),
		}}
		s := &stream{rng: rand.New(rand.NewSource(int64(i))), keys: keys, model: model{}, tp: iceberg.TP{Topic: "cdc", Partition: 0}}
		for r := 0; r < 7; r++ {
			recs, offs := s.round(events / 7)
			commitRound(b, w, recs, offs)
		}
		tbl := mustLoad(b, cat, w.Ident)
		before, err := Stats(ctx, tbl, "")
		require.NoError(b, err)
		t0 := time.Now()
		icebergtest.Read(b, tbl.MetadataLocation(), "SELECT count(*) FROM t", nil)
		readBefore := time.Since(t0)

		b.StartTimer()
		res, err := Compact(ctx, cat, w.Ident, CompactOptions{})
		b.StopTimer()
		require.NoError(b, err)
		require.Empty(b, res.Abandoned)

		tbl = mustLoad(b, cat, w.Ident)
		after, err := Stats(ctx, tbl, "")
		require.NoError(b, err)
		t0 = time.Now()
		got := icebergtest.Read(b, tbl.MetadataLocation(), "SELECT count(*) FROM t", nil)
		readAfter := time.Since(t0)
		require.Equal(b, len(s.model), int(mustInt(b, got.Rows[0][0])))
		b.ReportMetric(float64(len(s.model)), "live_rows")
		b.ReportMetric(float64(before.DataFiles), "data_files_before")
		b.ReportMetric(float64(before.DeleteFiles), "delete_files_before")
		b.ReportMetric(float64(before.DataRecords), "data_rows_before")
		b.ReportMetric(float64(before.DeleteRecords), "delete_rows_before")
		b.ReportMetric(float64(after.DataFiles), "data_files_after")
		b.ReportMetric(float64(after.DeleteFiles), "delete_files_after")
		b.ReportMetric(readBefore.Seconds(), "duckdb_s_before")
		b.ReportMetric(readAfter.Seconds(), "duckdb_s_after")
	}
}
