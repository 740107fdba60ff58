package maintenance

import (
	"context"
	"math/rand"
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// TestCompactionPositionDeletes: another writer deletes rows merge-on-read (position deletes)
// while a compaction is planned: the compaction is abandoned (the deletes name files it is about
// to replace), the row stays deleted; the next compaction applies the position deletes and
// removes them.
func TestCompactionPositionDeletes(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t, t.TempDir())
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
		OffsetsKey: icetable.OffsetsSummaryKey("connect-pos"),
	}}
	s := &stream{rng: rand.New(rand.NewSource(21)), keys: 40, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
	for i := 0; i < 3; i++ {
		recs, offs := s.round(50)
		commitRound(t, w, recs, offs)
	}
	tbl := mustLoad(t, cat, w.Ident)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.SetProperties(ice.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}))
	_, err := tx.Commit(ctx)
	require.NoError(t, err)

	rw, err := PlanCompaction(ctx, cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	require.NotNil(t, rw)

	var victim int64 = -1
	for id := range s.model {
		victim = id
		break
	}
	tbl = mustLoad(t, cat, w.Ident)
	tx = tbl.NewTransaction()
	require.NoError(t, tx.Delete(ctx, ice.EqualTo(ice.Reference("id"), victim), nil))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	delete(s.model, victim)
	st, err := Stats(ctx, mustLoad(t, cat, w.Ident), "")
	require.NoError(t, err)
	require.Greater(t, st.DeleteFiles, st.EqualityDeletes, "the delete wrote position deletes")

	res, err := rw.Commit(ctx)
	require.NoError(t, err)
	require.Contains(t, res.Abandoned, "position deletes")
	tbl = mustLoad(t, cat, w.Ident)
	want := s.model.rows()
	require.Equal(t, want, goRows(t, tbl))
	require.Equal(t, want, duckRows(t, tbl.MetadataLocation()))

	res, err = Compact(ctx, cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	require.Empty(t, res.Abandoned)
	tbl = mustLoad(t, cat, w.Ident)
	st, err = Stats(ctx, tbl, "")
	require.NoError(t, err)
	require.Zero(t, st.DeleteFiles, "position and equality deletes applied and removed")
	require.Equal(t, want, goRows(t, tbl))
	require.Equal(t, want, duckRows(t, tbl.MetadataLocation()))
	require.Equal(t, want, javaRows(t, tbl.MetadataLocation()))
}
