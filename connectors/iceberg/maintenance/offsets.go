package maintenance

import (
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// offsetsPrefix starts every snapshot summary key under which the sink records its Kafka offsets
// (one key per consumer group).
var offsetsPrefix = icetable.OffsetsSummaryKey("")

// headOffsets returns, per offsets key, the raw value that snap or its nearest ancestor carrying
// the key holds: what the sink reads as the table's committed offsets. A maintenance snapshot
// copies them into its own summary so the head always carries them, whatever expiry later
// removes from its ancestry.
func headOffsets(tbl *table.Table, snap *table.Snapshot) map[string]string {
	out := map[string]string{}
	for cur := snap; cur != nil; {
		if cur.Summary != nil {
			for k, v := range cur.Summary.Properties {
				if strings.HasPrefix(k, offsetsPrefix) {
					if _, seen := out[k]; !seen {
						out[k] = v
					}
				}
			}
		}
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
	}
	return out
}

// offsetsDepth returns how many ancestors back from head (0: head itself) the deepest offsets
// key is first found: expiry must keep that many snapshots plus one so that every consumer
// group still finds its offsets. -1 when no snapshot carries offsets.
func offsetsDepth(tbl *table.Table, head *table.Snapshot) int {
	seen := map[string]bool{}
	deepest := -1
	depth := 0
	for cur := head; cur != nil; depth++ {
		if cur.Summary != nil {
			for k := range cur.Summary.Properties {
				if strings.HasPrefix(k, offsetsPrefix) && !seen[k] {
					seen[k] = true
					deepest = depth
				}
			}
		}
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
	}
	return deepest
}
