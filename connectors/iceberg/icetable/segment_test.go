package icetable_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// TestSegmentManyBatches: a segment of several spool batches, with strings whose sizes change from
// batch to batch and rows that do not convert, reads back every good row in order.
func TestSegmentManyBatches(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	s, err := icetable.NewSegment(nil, t.TempDir(), icetable.TP{Topic: "t", Partition: 0}, 1, sc)
	require.NoError(t, err)
	defer s.Remove()
	const n = 3*icetable.SpoolBatchRows + 100
	str := func(i int) string { return strings.Repeat("x", (i/icetable.SpoolBatchRows)*40+i%7) + fmt.Sprint(i) }
	bad := func(i int) bool { return i%1000 == 3 }
	for i := range n {
		row := icerow.Row{"id": int64(i), "s": str(i), "b": []byte(str(i))}
		if bad(i) {
			row["id"] = "not a number"
		}
		if err := s.Add(row, int64(i)); bad(i) {
			require.Error(t, err)
		} else {
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Seal())
	var got, skipped int
	next := 100
	for rec, err := range s.Batches(sc, 1, 100, &got, &skipped) {
		require.NoError(t, err)
		ids := rec.Column(0).(*array.Int64)
		ss := rec.Column(1).(*array.String)
		bs := rec.Column(2).(*array.Binary)
		for r := 0; r < int(rec.NumRows()); r++ {
			for bad(next) {
				next++
			}
			require.EqualValues(t, next, ids.Value(r))
			require.Equal(t, str(next), ss.Value(r))
			require.Equal(t, str(next), string(bs.Value(r)))
			next++
		}
		rec.Release()
	}
	require.Equal(t, n, next)
	require.Equal(t, 100-1, skipped) // row 3 below the start is bad, not skipped
	good := 0
	for i := 100; i < n; i++ {
		if !bad(i) {
			good++
		}
	}
	require.Equal(t, good, got)
}
