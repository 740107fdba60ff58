package maintenance

import (
	"context"
	"math/rand"
	"os/exec"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestMaintenanceRESTCatalog runs maintenance through Apache Iceberg's REST catalog server
// (Java), whose commits check the requirements server-side: a compaction across a sink commit,
// two racing compactions (the second abandoned), a manifest rewrite and expiry; the live rows
// stay the model and the sink's offsets survive.
func TestMaintenanceRESTCatalog(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	ctx := context.Background()
	uri := icebergtest.StartRESTCatalog(t, t.TempDir())
	cat, err := catalogx.Open(ctx, "rest", map[string]string{"type": "rest", "uri": uri})
	require.NoError(t, err)
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
		OffsetsKey: icetable.OffsetsSummaryKey("connect-rest"),
	}}
	s := &stream{rng: rand.New(rand.NewSource(9)), keys: 40, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
	sinkRound := func() {
		recs, offs := s.round(60)
		commitRound(t, w, recs, offs)
	}
	check := func(step string) {
		t.Helper()
		tbl := mustLoad(t, cat, w.Ident)
		want := s.model.rows()
		require.Equal(t, want, goRows(t, tbl), step)
		require.Equal(t, want, duckRows(t, tbl.MetadataLocation()), step)
		offs, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
		require.NoError(t, err)
		require.Equal(t, s.off, offs[s.tp], step)
	}
	for i := 0; i < 3; i++ {
		sinkRound()
	}

	rw, err := PlanCompaction(ctx, cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	require.NotNil(t, rw)
	sinkRound()
	res, err := rw.Commit(ctx)
	require.NoError(t, err)
	require.Empty(t, res.Abandoned)
	check("compaction across a sink commit")

	sinkRound()
	a, err := PlanCompaction(ctx, cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	b, err := PlanCompaction(ctx, cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	resA, err := a.Commit(ctx)
	require.NoError(t, err)
	require.Empty(t, resA.Abandoned)
	resB, err := b.Commit(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, resB.Abandoned)
	check("racing compactions")

	sinkRound()
	_, err = RewriteManifests(ctx, cat, w.Ident, "")
	require.NoError(t, err)
	_, err = Compact(ctx, cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	exp, err := ExpireSnapshots(ctx, cat, w.Ident, ExpireOptions{RetainLast: 1, MaxAge: time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, 1, exp.SnapshotsAfter)
	check("manifest rewrite, compaction and expiry")
}
