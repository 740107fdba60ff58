package maintenance

import (
	"context"
	"errors"
	"math/rand"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// expiryBesideSink is a sink writer that has committed three rounds (it holds the table as its
// last commit left it) and a compaction committed since by another process, so that the
// writer's loaded head is no longer the head.
func expiryBesideSink(t *testing.T) (*icetable.Writer, *stream) {
	t.Helper()
	cat := sqliteCatalog(t, t.TempDir())
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
		OffsetsKey: icetable.OffsetsSummaryKey("connect-test"),
	}}
	s := &stream{rng: rand.New(rand.NewSource(5)), keys: 40, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
	for i := 0; i < 3; i++ {
		recs, offs := s.round(40)
		_, err := w.Commit(context.Background(), recs, offs, nil)
		require.NoError(t, err)
	}
	res, err := Compact(context.Background(), cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	require.NotZero(t, res.SnapshotID, "the compaction commits")
	require.NotEqual(t, res.SnapshotID, w.Tbl.CurrentSnapshot().SnapshotID)
	return w, s
}

func requireExact(t *testing.T, w *icetable.Writer, s *stream) {
	t.Helper()
	tbl := mustLoad(t, w.Cat, w.Ident)
	want := s.model.rows()
	require.Equal(t, want, goRows(t, tbl), "iceberg-go")
	require.Equal(t, want, duckRows(t, tbl.MetadataLocation()), "DuckDB")
	offs, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
	require.NoError(t, err)
	require.Equal(t, s.off, offs[s.tp])
}

// TestRoundAfterItsHeadExpired: an expiry without grace removes the snapshot a sink writer had
// loaded (and its manifest list). The writer's next round plans again on the current head and
// commits at its first attempt; a round planned before the expiry is fenced (the head moved), not
// failed, and commits when planned again. The rows are exact.
func TestRoundAfterItsHeadExpired(t *testing.T) {
	ctx := context.Background()
	t.Run("planned after", func(t *testing.T) {
		w, s := expiryBesideSink(t)
		loaded := w.Tbl.CurrentSnapshot().SnapshotID
		_, err := ExpireSnapshots(ctx, w.Cat, w.Ident, ExpireOptions{MaxAge: time.Millisecond})
		require.NoError(t, err)
		require.Nil(t, mustLoad(t, w.Cat, w.Ident).SnapshotByID(loaded), "the writer's head was expired")

		recs, offs := s.round(40)
		_, err = w.Commit(ctx, recs, offs, nil)
		require.NoError(t, err, "the round after the expiry")
		requireExact(t, w, s)
	})
	t.Run("planned before", func(t *testing.T) {
		w, s := expiryBesideSink(t)
		recs, offs := s.round(40)
		p, err := w.Prepare(ctx, recs)
		require.NoError(t, err)
		_, err = ExpireSnapshots(ctx, w.Cat, w.Ident, ExpireOptions{MaxAge: time.Millisecond})
		require.NoError(t, err)
		_, err = w.Apply(ctx, []*icetable.Part{p}, offs, nil)
		require.True(t, errors.Is(err, icetable.ErrFenced), "a part planned on an expired head: %v", err)

		_, err = w.Commit(ctx, recs, offs, nil)
		require.NoError(t, err, "the round planned again")
		requireExact(t, w, s)
	})
}

// TestExpireGrace: with a grace age, the snapshots that were the head within it stay with their
// files, so a writer or a reader that loaded one of them still reads it (the writer's round is
// then fenced by the moved head, as after any concurrent commit, and planned again); the grace
// counts from when a snapshot stopped being the head (its child's commit), not from its own.
func TestExpireGrace(t *testing.T) {
	ctx := context.Background()
	w, s := expiryBesideSink(t)
	loaded := w.Tbl.CurrentSnapshot().SnapshotID
	res, err := ExpireSnapshots(ctx, w.Cat, w.Ident, ExpireOptions{MaxAge: time.Millisecond, Grace: time.Hour})
	require.NoError(t, err)
	require.Equal(t, res.SnapshotsBefore, res.SnapshotsAfter, "every snapshot was the head within the hour")
	require.Equal(t, res.SnapshotsBefore-1, res.GraceDepth)
	require.NotNil(t, mustLoad(t, w.Cat, w.Ident).SnapshotByID(loaded))
	require.Equal(t, s.model.rows(), goRows(t, w.Tbl), "the writer's loaded head reads as before")

	recs, offs := s.round(40)
	commitRound(t, w, recs, offs)
	requireExact(t, w, s)

	// the depth at a given instant: the head, and each ancestor whose child came at or after it
	tbl := mustLoad(t, w.Cat, w.Ident)
	var chain []*table.Snapshot // head first
	for cur := tbl.CurrentSnapshot(); cur != nil; {
		chain = append(chain, cur)
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
	}
	require.Equal(t, 0, recentDepth(tbl, chain[0], time.UnixMilli(chain[0].TimestampMs+1)), "only the head")
	for i, snap := range chain {
		want := i + 1 // snap's parent was the head until snap came
		if i == len(chain)-1 {
			want = i // the oldest has no parent
		}
		// snapshots committed in the same millisecond count as one instant
		for want < len(chain)-1 && chain[want].TimestampMs == snap.TimestampMs {
			want++
		}
		require.Equal(t, want, recentDepth(tbl, chain[0], time.UnixMilli(snap.TimestampMs)), "since snapshot %d", i)
	}
}
