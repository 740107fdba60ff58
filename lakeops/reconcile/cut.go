package reconcile

import (
	"sort"

	"github.com/apache/iceberg-go/table"
)

// PartitionLag is one topic-partition's position in each layer.
type PartitionLag struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// IcebergNext and ClickHouseNext are the next offsets not yet in each layer (-1: unknown).
	IcebergNext    int64 `json:"iceberg_next"`
	ClickHouseNext int64 `json:"clickhouse_next"`
	// CutNext is the offset the compared Iceberg snapshot holds up to.
	CutNext int64 `json:"cut_next"`
	// Lag is IcebergNext - ClickHouseNext: positive when ClickHouse is behind, negative when Iceberg is.
	Lag int64 `json:"lag"`
	// InFlight: the ClickHouse sink has a block of this partition between its BEFORE and AFTER state.
	InFlight bool `json:"in_flight,omitempty"`
}

// Cut is the point at which both layers are compared.
type Cut struct {
	SnapshotID int64 `json:"snapshot_id"`
	// Consistent: the compared Iceberg snapshot holds exactly the offsets ClickHouse holds.
	Consistent bool   `json:"consistent"`
	Reason     string `json:"reason"`
	// LaggingLayer is "clickhouse", "iceberg" or "" (both at the same offsets); LagRecords sums the lag.
	LaggingLayer string         `json:"lagging_layer,omitempty"`
	LagRecords   int64          `json:"lag_records"`
	Partitions   []PartitionLag `json:"partitions"`
}

// chooseCut picks the Iceberg snapshot to compare ClickHouse with. ClickHouse has no history, Iceberg has
// one snapshot per commit, each recording the offsets it holds: when ClickHouse is behind, the snapshot
// whose offsets equal ClickHouse's is the consistent cut. When Iceberg is behind, or no snapshot matches
// (the layers commit at different points), the head is compared and the records between the two positions
// are in flight (their keys are left out when Kafka is reachable).
func chooseCut(l *lakeTable, ch chOffsets, chKnown bool) (Cut, *table.Snapshot, map[tp]int64, error) {
	head := l.tbl.CurrentSnapshot()
	cut := Cut{}
	// A table without a snapshot (created, first commit not yet done) holds no record: what ClickHouse
	// holds is lag, the records up to its offsets in flight.
	headOff := map[tp]int64{}
	if head != nil {
		cut.SnapshotID = head.SnapshotID
		var err error
		if headOff, err = l.offsetsAt(head); err != nil {
			return cut, nil, nil, err
		}
	}
	all := map[tp]bool{}
	for k := range headOff {
		all[k] = true
	}
	for k := range ch.next {
		all[k] = true
	}
	tps := make([]tp, 0, len(all))
	for k := range all {
		tps = append(tps, k)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	equal := func(o map[tp]int64) bool {
		for _, k := range tps {
			if o[k] != ch.next[k] {
				return false
			}
		}
		return true
	}
	snap, snapOff := head, headOff
	switch {
	case head == nil:
		cut.Reason = "the Iceberg table has no snapshot yet: ClickHouse's records are in flight"
	case l.offsetsKey == "":
		cut.Reason = "the Iceberg snapshots record no Kafka offsets: heads compared"
	case !chKnown:
		cut.Reason = "ClickHouse records no offsets for this table (no exactly-once state): heads compared"
	case len(ch.inFlight) > 0:
		cut.Reason = "the ClickHouse sink has a block in flight: heads compared, in-flight records left out"
	case equal(headOff):
		cut.Consistent, cut.Reason = true, "both layers hold the same offsets"
	default:
		// The newest snapshot holding exactly ClickHouse's offsets is a consistent cut; failing that, the
		// newest one ClickHouse is at or ahead of on every partition keeps the records in between (whose
		// keys are then left out) fewest.
		var below *table.Snapshot
		var belowOff map[tp]int64
		for cur := head; cur != nil; {
			o, err := l.offsetsAt(cur)
			if err != nil {
				return cut, nil, nil, err
			}
			if equal(o) {
				snap, snapOff = cur, o
				cut.Consistent, cut.SnapshotID = true, cur.SnapshotID
				cut.Reason = "ClickHouse is behind: compared with the Iceberg snapshot holding ClickHouse's offsets"
				break
			}
			if below == nil && atOrBelow(o, ch.next, tps) {
				below, belowOff = cur, o
			}
			if cur.ParentSnapshotID == nil {
				break
			}
			cur = l.tbl.SnapshotByID(*cur.ParentSnapshotID)
		}
		if !cut.Consistent {
			if below != nil {
				snap, snapOff, cut.SnapshotID = below, belowOff, below.SnapshotID
				cut.Reason = "no Iceberg snapshot holds ClickHouse's offsets: compared with the newest snapshot ClickHouse is at or ahead of, keys of the records in between left out"
			} else {
				cut.Reason = "no Iceberg snapshot holds ClickHouse's offsets: heads compared, keys of the records in between left out"
			}
		}
	}
	var behindCH, behindIce int64
	for _, k := range tps {
		pl := PartitionLag{Topic: k.Topic, Partition: k.Partition, IcebergNext: headOff[k], ClickHouseNext: -1, CutNext: snapOff[k],
			InFlight: ch.inFlight[k]}
		if chKnown {
			pl.ClickHouseNext = ch.next[k]
			pl.Lag = headOff[k] - ch.next[k]
			if pl.Lag > 0 {
				behindCH += pl.Lag
			} else {
				behindIce -= pl.Lag
			}
		}
		cut.Partitions = append(cut.Partitions, pl)
	}
	switch {
	case behindCH > 0 && behindIce > 0:
		cut.LaggingLayer, cut.LagRecords = "both", behindCH+behindIce
	case behindCH > 0:
		cut.LaggingLayer, cut.LagRecords = "clickhouse", behindCH
	case behindIce > 0:
		cut.LaggingLayer, cut.LagRecords = "iceberg", behindIce
	}
	return cut, snap, snapOff, nil
}

func atOrBelow(o, ch map[tp]int64, tps []tp) bool {
	for _, k := range tps {
		if o[k] > ch[k] {
			return false
		}
	}
	return true
}
