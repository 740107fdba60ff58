package maintenance

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
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
		w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
			IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
			OffsetsKey: icetable.OffsetsSummaryKey("connect-bench"),
		}}
		s := &stream{rng: rand.New(rand.NewSource(int64(i))), keys: keys, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
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

// BenchmarkUpsertReadBack: an update stream (1 in 5 changes a delete) over a key space, committed by the sink's
// writer in rounds of 50,000 changes (a 10 s commit interval at 5,000 changes/s), read back by DuckDB
// (`SELECT count(*), sum(length(name))`, a Python process start included) in three tables: without maintenance,
// with a compaction after every third commit (the last two commits stay uncompacted, as a reader finds the table
// between two maintenance runs), with a compaction after every commit, and an append-only table holding the
// same final rows.
//
//	go test -run '^$' -bench UpsertReadBack -benchtime 1x -timeout 60m ./connectors/iceberg/maintenance/
func BenchmarkUpsertReadBack(b *testing.B) {
	for _, sz := range []struct{ events, keys int }{{100000, 10000}, {1000000, 100000}} {
		b.Run(fmt.Sprintf("events=%d/keys=%d", sz.events, sz.keys), func(b *testing.B) { benchReadBack(b, sz.events, sz.keys) })
	}
}

func benchReadBack(b *testing.B, events, keys int) {
	const perCommit = 50000
	ctx := context.Background()
	read := func(tbl *table.Table) (time.Duration, int64) {
		t0 := time.Now()
		got := icebergtest.Read(b, tbl.MetadataLocation(), "SELECT count(*), sum(length(name)) FROM t", nil)
		return time.Since(t0), mustInt(b, got.Rows[0][0])
	}
	report := func(prefix string, tbl *table.Table, d time.Duration) {
		st, err := Stats(ctx, tbl, "")
		require.NoError(b, err)
		b.ReportMetric(float64(st.DataFiles), prefix+"_data_files")
		b.ReportMetric(float64(st.DeleteFiles), prefix+"_delete_files")
		b.ReportMetric(d.Seconds(), prefix+"_duckdb_s")
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cat := sqliteCatalog(b, b.TempDir())
		var final model
		// every: compact after every so many commits (0: never)
		for _, every := range []int{0, 3, 1} {
			name := map[int]string{0: "plain", 3: "maintained_every3", 1: "maintained_every1"}[every]
			ident := table.Identifier{"db", name}
			w := &icetable.Writer{Cat: cat, Ident: ident, Opts: icetable.TableOptions{
				IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
				OffsetsKey: icetable.OffsetsSummaryKey("connect-bench"),
			}}
			s := &stream{rng: rand.New(rand.NewSource(int64(i))), keys: keys, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
			for r := 1; r*perCommit <= events; r++ {
				recs, offs := s.round(perCommit)
				commitRound(b, w, recs, offs)
				if every > 0 && r%every == 0 {
					t0 := time.Now()
					res, err := Compact(ctx, cat, ident, CompactOptions{})
					b.ReportMetric(time.Since(t0).Seconds(), name+"_last_compaction_s")
					require.NoError(b, err)
					require.Empty(b, res.Abandoned)
				}
			}
			tbl := mustLoad(b, cat, ident)
			d, n := read(tbl)
			require.Equal(b, int64(len(s.model)), n)
			report(name, tbl, d)
			final = s.model
		}
		// the same final rows, appended once
		aw := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "append_only"}, Opts: icetable.TableOptions{
			PartitionBy: []string{"day(ts)"}, AutoCreate: true, OffsetsKey: icetable.OffsetsSummaryKey("connect-bench"),
		}}
		recs := make([]icetable.Rec, 0, len(final))
		for _, v := range final {
			var id int64
			var name string
			var day int
			parts := strings.Split(v, "|")
			_, err := fmt.Sscan(parts[0], &id)
			require.NoError(b, err)
			name = parts[1]
			_, err = fmt.Sscan(parts[2], &day)
			require.NoError(b, err)
			recs = append(recs, icetable.Rec{Op: icerow.OpInsert, Schema: customerSchema, TP: icetable.TP{Topic: "cdc", Partition: 0},
				Row: icerow.Row{"id": id, "name": name, "ts": baseTime.Add(time.Duration(day) * 24 * time.Hour)}})
		}
		commitRound(b, aw, recs, nil)
		tbl := mustLoad(b, cat, aw.Ident)
		d, n := read(tbl)
		require.Equal(b, int64(len(final)), n)
		report("append_only", tbl, d)
		b.ReportMetric(float64(len(final)), "live_rows")
	}
}
