package maintenance

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestRetention appends rows of random ages (0 to 20 days, several commits) to a history table
// partitioned by day(ts) and to an unpartitioned one, applies a 10-day retention and expires
// every older snapshot: every Parquet file left in the table's location holds only rows younger
// than the horizon, and together they hold exactly the model's younger rows. In the partitioned
// table, the partitions entirely older are dropped as file removals and the files of the younger
// partitions are neither rewritten nor removed.
func TestRetention(t *testing.T) {
	for _, partitioned := range []bool{true, false} {
		t.Run(fmt.Sprintf("partitioned=%v", partitioned), func(t *testing.T) { testRetention(t, partitioned) })
	}
}

func testRetention(t *testing.T, partitioned bool) {
	ctx := context.Background()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	cat := sqliteCatalog(t, dir)
	opts := icetable.TableOptions{AutoCreate: true, OffsetsKey: icetable.OffsetsSummaryKey("connect-hist")}
	if partitioned {
		opts.PartitionBy = []string{"day(ts)"}
	}
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "history"}, Opts: opts}
	now := time.Now().UTC().Truncate(time.Microsecond)
	maxAge := 10 * 24 * time.Hour
	horizon := now.Add(-maxAge)
	tp := icetable.TP{Topic: "cdc", Partition: 0}
	all := map[int64]time.Time{}
	var off int64
	for round := 0; round < 4; round++ { // several commits: several files per partition
		var recs []icetable.Rec
		for i := 0; i < 60; i++ {
			id := off
			ts := now.Add(-time.Duration(rng.Int63n(int64(20 * 24 * time.Hour))))
			if d := ts.Sub(horizon); d > -time.Minute && d < time.Minute {
				continue // Run takes its horizon from its own clock, a little later
			}
			all[id] = ts
			recs = append(recs, icetable.Rec{Op: icerow.OpInsert, Schema: customerSchema, TP: tp, Offset: off,
				Row: icerow.Row{"id": id, "name": fmt.Sprintf("n%d", id), "ts": ts}})
			off++
		}
		commitRound(t, w, recs, icetable.Offsets{tp: off})
	}
	var want []string
	for id, ts := range all {
		if !ts.Before(horizon) {
			want = append(want, fmt.Sprintf("%d|n%d", id, id))
		}
	}
	sort.Strings(want)

	tbl := mustLoad(t, cat, w.Ident)
	young := map[string]bool{} // files of the partitions starting after the horizon
	for p := range entries(t, tbl, tbl.CurrentSnapshot()) {
		if i := strings.Index(p, "ts_day="); i >= 0 {
			day, err := time.Parse("2006-01-02", p[i+len("ts_day="):i+len("ts_day=2006-01-02")])
			require.NoError(t, err)
			if day.After(horizon) {
				young[p] = true
			}
		}
	}
	require.Equal(t, partitioned, len(young) > 0)

	pol := Policy{Retention: RetentionOptions{Column: "ts", MaxAge: maxAge},
		Expire: ExpireOptions{RetainLast: 1, MaxAge: time.Millisecond}}
	if partitioned {
		pol.Compact.MinInputFiles = 1 << 20 // no compaction of the younger partitions' small files
	}
	rep, err := Run(ctx, cat, w.Ident, pol, Actions{Compact: true, ExpireSnapshots: true})
	require.NoError(t, err)
	require.NotNil(t, rep.Retention)
	t.Logf("retention %+v", *rep.Retention)
	if partitioned {
		require.Positive(t, rep.Retention.PartitionsDropped)
		require.Positive(t, rep.Retention.DataFilesDropped)
	} else {
		require.Zero(t, rep.Retention.PartitionsDropped)
		require.Positive(t, rep.Retention.RowsDeleted)
	}

	tbl = mustLoad(t, cat, w.Ident)
	live := entries(t, tbl, tbl.CurrentSnapshot())
	for p := range young {
		require.Contains(t, live, p, "a file of a younger partition was rewritten or removed")
	}
	require.Equal(t, want, scanIDs(t, tbl), "table scan")
	require.Equal(t, want, icebergtest.DuckRows(t, tbl.MetadataLocation(), "SELECT CAST(id AS VARCHAR) || '|' || name FROM t"), "DuckDB read")

	// every Parquet file of the location: only younger rows, the model's exactly
	var got []string
	var files int
	require.NoError(t, filepath.WalkDir(localPath(tbl.Location()), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		files++
		for _, r := range icebergtest.FileRows(t, p, "id,name,ts") {
			require.False(t, parseTS(t, *r[2]).Before(horizon), "%s holds row %s of %s, older than the horizon %s", p, *r[0], *r[2], horizon)
			got = append(got, *r[0]+"|"+*r[1])
		}
		return nil
	}))
	sort.Strings(got)
	require.Positive(t, files)
	require.Equal(t, want, got, "rows of the Parquet files left in the location")

	// a second run finds nothing older
	res, err := ApplyRetention(ctx, cat, w.Ident, pol.Retention, now)
	require.NoError(t, err)
	require.Zero(t, res.DataFilesDropped+int(res.RowsDeleted))
}

func parseTS(t testing.TB, s string) time.Time {
	t.Helper()
	for _, layout := range []string{"2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999Z07:00", "2006-01-02 15:04:05.999999"} {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts
		}
	}
	t.Fatalf("timestamp %q", s)
	return time.Time{}
}

func scanIDs(t testing.TB, tbl *table.Table) []string {
	t.Helper()
	var out []string
	for _, r := range icebergtest.ScanRows(t, tbl) {
		out = append(out, fmt.Sprintf("%v|%v", r["id"], r["name"]))
	}
	sort.Strings(out)
	return out
}

// TestRetentionPartitionEnd: the end of a partition of each time transform.
func TestRetentionPartitionEnd(t *testing.T) {
	for _, c := range []struct {
		tr   string
		v    any
		want time.Time
	}{
		{"day", int32(1), time.Date(1970, 1, 3, 0, 0, 0, 0, time.UTC)},
		{"hour", int32(25), time.Date(1970, 1, 2, 2, 0, 0, 0, time.UTC)},
		{"month", int32(13), time.Date(1971, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"year", int32(56), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		tr, err := ice.ParseTransform(c.tr)
		require.NoError(t, err)
		got, ok := partitionEnd(tr, c.v)
		require.True(t, ok, c.tr)
		require.Equal(t, c.want, got, c.tr)
	}
}
