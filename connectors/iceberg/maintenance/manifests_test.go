package maintenance

import (
	"context"
	"math/rand"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// TestRewriteManifests: after a run of append commits (one manifest each) the data manifests
// merge into one; the rows, the files and the sink's offsets stay.
func TestRewriteManifests(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t, t.TempDir())
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
		AutoCreate: true, OffsetsKey: icetable.OffsetsSummaryKey("connect-m"),
	}}
	s := &stream{rng: rand.New(rand.NewSource(4)), keys: 1 << 30, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
	for i := 0; i < 6; i++ {
		recs, offs := s.round(30)
		for j := range recs {
			if recs[j].Op == icerow.OpDelete { // an append table: inserts only
				id := recs[j].Row["id"].(int64)
				recs[j].Op, recs[j].Row = icerow.OpInsert, icerow.Row{"id": id, "name": "d", "ts": baseTime}
				s.model[id] = modelRow(id, "d", 0)
			} else {
				recs[j].Op = icerow.OpInsert
			}
		}
		commitRound(t, w, recs, offs)
	}
	tbl := mustLoad(t, cat, w.Ident)
	filesBefore, err := Stats(ctx, tbl, "")
	require.NoError(t, err)

	res, err := RewriteManifests(ctx, cat, w.Ident, "")
	require.NoError(t, err)
	require.Equal(t, 6, res.ManifestsBefore)
	require.Equal(t, 1, res.ManifestsAfter)

	tbl = mustLoad(t, cat, w.Ident)
	require.Equal(t, table.OpReplace, tbl.CurrentSnapshot().Summary.Operation)
	filesAfter, err := Stats(ctx, tbl, "")
	require.NoError(t, err)
	require.Equal(t, filesBefore.DataFiles, filesAfter.DataFiles)
	want := s.model.rows()
	require.Equal(t, want, goRows(t, tbl))
	require.Equal(t, want, duckRows(t, tbl.MetadataLocation()))
	offs, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
	require.NoError(t, err)
	require.Equal(t, s.off, offs[s.tp])

	again, err := RewriteManifests(ctx, cat, w.Ident, "")
	require.NoError(t, err)
	require.Equal(t, 1, again.ManifestsAfter, "already one manifest: nothing to do")
	require.Zero(t, again.Rewritten)
}
