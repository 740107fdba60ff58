package icetable

import (
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// OffsetsSummary returns the offsets entries (one per consumer group, OffsetsSummaryKey) recorded as of
// snap: for each group, the value of snap or of its nearest ancestor carrying the group's key. A commit
// that replaces or copies snap's rows carries them so that the sink resumes from them and a reader knows
// which Kafka offsets the rows hold. The map is the caller's to add to.
func OffsetsSummary(tbl *table.Table, snap *table.Snapshot) ice.Properties {
	out := ice.Properties{}
	for cur := snap; cur != nil; {
		if cur.Summary != nil {
			for k, v := range cur.Summary.Properties {
				if _, seen := out[k]; !seen && strings.HasPrefix(k, offsetsPrefix) {
					out[k] = v
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
