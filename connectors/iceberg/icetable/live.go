package icetable

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// LiveRows reads the current state of tbl as of snapshot snapshotID (0: the table's current snapshot):
// every position and equality delete file is applied (iceberg-go's scan planning), so each live row is
// yielded once. columns selects the columns to read (nil: all). Values have icerow.Row's types: bool,
// int32, int64, float32, float64, string, []byte, time.Time (dates and timestamps, UTC), time.Duration
// (time), icerow.Decimal, uuid.UUID, map[string]any (struct), []any (list), map values as []any of {key,value}.
// This is the read the sink's own upsert planning does for versioned keys, over the whole table.
func LiveRows(ctx context.Context, tbl *table.Table, snapshotID int64, columns []string) iter.Seq2[icerow.Row, error] {
	return func(yield func(icerow.Row, error) bool) {
		opts := []table.ScanOption{}
		if snapshotID != 0 {
			opts = append(opts, table.WithSnapshotID(snapshotID))
		}
		if len(columns) > 0 {
			opts = append(opts, table.WithSelectedFields(columns...))
		}
		_, it, err := tbl.Scan(opts...).ToArrowRecords(ctx)
		if err != nil {
			yield(nil, fmt.Errorf("iceberg: scanning %s: %w", strings.Join(tbl.Identifier(), "."), err))
			return
		}
		for rec, err := range it {
			if err != nil {
				yield(nil, fmt.Errorf("iceberg: reading %s: %w", strings.Join(tbl.Identifier(), "."), err))
				return
			}
			rows := icerow.RecordToRows(rec)
			rec.Release()
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// SnapshotOffsets returns the Kafka offsets recorded under the summary key key (OffsetsSummaryKey) as of
// snapshot snap: its own summary, or that of its nearest ancestor carrying the key (a maintenance commit
// may not carry it). ok is false when no snapshot up to the first one carries the key.
func SnapshotOffsets(tbl *table.Table, snap *table.Snapshot, key string) (o Offsets, ok bool, err error) {
	for cur := snap; cur != nil; {
		if cur.Summary != nil {
			if v, found := cur.Summary.Properties[key]; found {
				o, err = decodeOffsets(v)
				if err != nil {
					return nil, false, fmt.Errorf("iceberg: snapshot %d: %s: %w", cur.SnapshotID, key, err)
				}
				return o, true, nil
			}
		}
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
	}
	return Offsets{}, false, nil
}

// OffsetsSummaryKeys lists the offsets keys (one per consumer group that committed to the table) found in
// the summaries of snap and its ancestors, sorted.
func OffsetsSummaryKeys(tbl *table.Table, snap *table.Snapshot) []string {
	seen := map[string]bool{}
	for cur := snap; cur != nil; {
		if cur.Summary != nil {
			for k := range cur.Summary.Properties {
				if strings.HasPrefix(k, offsetsPrefix) {
					seen[k] = true
				}
			}
		}
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
