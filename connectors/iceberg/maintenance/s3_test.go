package maintenance

import (
	"context"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestMaintenanceOnS3: compaction, expiry and orphan listing on an S3-compatible store (moto):
// the live rows stay the model (iceberg-go, DuckDB over S3), the files of expired snapshots are
// gone from the bucket, the referenced ones are there, and fresh objects are not orphans.
func TestMaintenanceOnS3(t *testing.T) {
	ctx := context.Background()
	s3 := icebergtest.StartS3(t, "lake")
	cat, err := catalogx.Open(ctx, "test", map[string]string{
		"catalog-impl":         "org.apache.iceberg.jdbc.JdbcCatalog",
		"uri":                  "jdbc:sqlite:" + filepath.Join(t.TempDir(), "catalog.db"),
		"warehouse":            "s3://lake/wh",
		"s3.endpoint":          s3.Endpoint,
		"s3.access-key-id":     s3.Key,
		"s3.secret-access-key": s3.Secret,
		"s3.path-style-access": "true",
		"client.region":        s3.Region,
	})
	require.NoError(t, err)
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
		OffsetsKey: icetable.OffsetsSummaryKey("connect-s3"),
	}}
	s := &stream{rng: rand.New(rand.NewSource(5)), keys: 40, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
	for i := 0; i < 4; i++ {
		recs, offs := s.round(50)
		commitRound(t, w, recs, offs)
	}
	before := referencedFiles(t, mustLoad(t, cat, w.Ident))

	res, err := Compact(ctx, cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	require.NotZero(t, res.SnapshotID)
	_, err = ExpireSnapshots(ctx, cat, w.Ident, ExpireOptions{RetainLast: 1, MaxAge: time.Millisecond})
	require.NoError(t, err)

	tbl := mustLoad(t, cat, w.Ident)
	require.Len(t, tbl.Metadata().Snapshots(), 1)
	stats, err := Stats(ctx, tbl, "")
	require.NoError(t, err)
	require.Zero(t, stats.DeleteFiles)
	fs, err := tbl.FS(ctx)
	require.NoError(t, err)
	after := referencedFiles(t, tbl)
	for f := range after {
		r, err := fs.Open(f)
		require.NoError(t, err, "referenced object %s", f)
		require.NoError(t, r.Close())
	}
	for f := range before {
		if !after[f] {
			r, err := fs.Open(f)
			if err == nil {
				r.Close()
			}
			require.Error(t, err, "object of an expired snapshot left: %s", f)
		}
	}
	want := s.model.rows()
	require.Equal(t, want, goRows(t, tbl))
	require.Equal(t, want, duckRowsS3(t, tbl.MetadataLocation(), s3))
	offs, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
	require.NoError(t, err)
	require.Equal(t, s.off, offs[s.tp])

	orphans, err := RemoveOrphanFiles(ctx, cat, w.Ident, OrphanOptions{OlderThan: time.Hour})
	require.NoError(t, err)
	require.Zero(t, orphans.Removed, "every object is younger than the safety age")
}
