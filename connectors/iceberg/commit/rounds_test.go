package commit

import (
	"testing"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// tablesBatch is a Batch of records per table only.
type tablesBatch map[string][]icetable.Rec

func (b tablesBatch) Tables() map[string][]icetable.Rec { return b }
func (b tablesBatch) Positions() icetable.Offsets       { return nil }
func (b tablesBatch) Rows() int                         { return 0 }
func (b tablesBatch) Assigned() []icetable.TP           { return nil }
func (b tablesBatch) Committed(bool)                    {}
func (b tablesBatch) Failed()                           {}
func (b tablesBatch) Fatal(error)                       {}
func (b tablesBatch) Task() TaskKey                     { return TaskKey{} }

// TestTableRecs: each table's records of every batch, in the batches' order, in a slice of their size.
func TestTableRecs(t *testing.T) {
	tp := func(p int32) icetable.TP { return icetable.TP{Topic: "t", Partition: p} }
	ds := []Batch{
		tablesBatch{"a": {{TP: tp(0), Offset: 1}, {TP: tp(0), Offset: 2}}, "b": {{TP: tp(0), Offset: 3}}},
		tablesBatch{"a": {{TP: tp(1), Offset: 7}}, "c": nil},
		tablesBatch{"b": {{TP: tp(2), Offset: 9}, {TP: tp(2), Offset: 10}}, "a": {{TP: tp(2), Offset: 11}}},
	}
	got := tableRecs(ds)
	want := map[string][]int64{"a": {1, 2, 7, 11}, "b": {3, 9, 10}, "c": {}}
	if len(got) != len(want) {
		t.Fatalf("tables %v, want %v", got, want)
	}
	for name, offs := range want {
		recs, ok := got[name]
		if !ok {
			t.Fatalf("table %s missing", name)
		}
		if len(recs) != len(offs) || cap(recs) != len(offs) {
			t.Fatalf("table %s: %d records in a slice of %d, want %d in %d", name, len(recs), cap(recs), len(offs), len(offs))
		}
		for i, r := range recs {
			if r.Offset != offs[i] {
				t.Fatalf("table %s record %d at offset %d, want %d", name, i, r.Offset, offs[i])
			}
		}
	}
	// the gathered slice is the round's own: the batches' records stay as they were
	got["a"][0].Offset = 100
	if ds[0].Tables()["a"][0].Offset != 1 {
		t.Fatal("gathering shares the batches' records")
	}
}
