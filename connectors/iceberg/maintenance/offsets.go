package maintenance

import (
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// offsetsPrefix starts every snapshot summary key under which the sink records its Kafka offsets
// (one key per consumer group).
var offsetsPrefix = icetable.OffsetsSummaryKey("")

// sinkKeyPrefix starts every snapshot summary key a Kafka Connect Iceberg sink writes: its
// offsets (kafka.connect.offsets.<group>, or .<control topic>.<group> for the Apache sink), the
// commit id, the valid-through timestamp, the task.
const sinkKeyPrefix = "kafka.connect."

// sinkSummary returns the summary entries a maintenance snapshot committed on top of snap
// carries, so that the head always holds what the sinks' recovery reads there: per offsets key,
// the value of snap or of its nearest ancestor carrying the key (what the sink reads as the
// table's committed offsets, whatever expiry later removes from the ancestry), and the other
// kafka.connect.* entries of the newest snapshot that carries offsets (the sink's last commit).
func sinkSummary(tbl *table.Table, snap *table.Snapshot) map[string]string {
	out := map[string]string{}
	latest := false // the other entries are taken from the newest sink commit only
	for cur := snap; cur != nil; {
		if cur.Summary != nil {
			commit := false
			for k := range cur.Summary.Properties {
				if strings.HasPrefix(k, offsetsPrefix) {
					commit = true
				}
			}
			for k, v := range cur.Summary.Properties {
				if !strings.HasPrefix(k, sinkKeyPrefix) {
					continue
				}
				if _, seen := out[k]; seen {
					continue
				}
				if strings.HasPrefix(k, offsetsPrefix) || (commit && !latest) {
					out[k] = v
				}
			}
			latest = latest || commit
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
