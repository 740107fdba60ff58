package maintenance

import (
	"context"
	"errors"
	"math/rand"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// TestCompactionUnderConcurrentSink runs compactions in a loop while the sink's writer commits
// rounds from another goroutine, so commits race for real (lost compare-and-swaps on both
// sides, re-validation, retries). At the end the live rows equal the model for iceberg-go,
// DuckDB and the Java reader, and the sink's offsets are intact.
func TestCompactionUnderConcurrentSink(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t, t.TempDir())
	ident := table.Identifier{"db", "customers"}
	w := &icetable.Writer{Cat: cat, Ident: ident, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
		OffsetsKey: icetable.OffsetsSummaryKey("connect-race"),
	}}
	s := &stream{rng: rand.New(rand.NewSource(11)), keys: 50, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
	recs, offs := s.round(50)
	commitRound(t, w, recs, offs)

	done := make(chan error, 1)
	go func() {
		for i := 0; i < 10; i++ {
			recs, offs := s.round(40)
			var err error
			for attempt := 0; attempt < 20; attempt++ {
				if _, err = w.Commit(ctx, recs, offs, nil); !errors.Is(err, icetable.ErrFenced) {
					break // committed, or failed for another reason than a moved head
				}
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var committed, abandoned, retried int
	for running := true; running; {
		select {
		case err := <-done:
			require.NoError(t, err, "sink")
			running = false
		default:
			res, err := Compact(ctx, cat, ident, CompactOptions{})
			require.NoError(t, err)
			switch {
			case res.Abandoned != "":
				abandoned++
			case res.SnapshotID != 0:
				committed++
			}
			if res.Attempts > 1 {
				retried++
			}
		}
	}
	t.Logf("compactions: %d committed, %d abandoned, %d retried after a lost race", committed, abandoned, retried)
	require.Positive(t, committed)

	tbl := mustLoad(t, cat, ident)
	want := s.model.rows()
	require.Equal(t, want, goRows(t, tbl))
	require.Equal(t, want, duckRows(t, tbl.MetadataLocation()))
	require.Equal(t, want, javaRows(t, tbl.MetadataLocation()))
	got, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
	require.NoError(t, err)
	require.Equal(t, s.off, got[s.tp])
}
