package icetable

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// Offsets are per topic-partition next offsets (the first offset NOT yet in the table).
type Offsets map[TP]int64

func (o Offsets) encode() string {
	m := make(map[string]int64, len(o))
	for tp, off := range o {
		m[tp.String()] = off
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func decodeOffsets(s string) (Offsets, error) {
	var m map[string]int64
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	o := make(Offsets, len(m))
	for k, v := range m {
		i := strings.LastIndexByte(k, '/')
		if i < 0 {
			return nil, fmt.Errorf("bad offsets key %q", k)
		}
		p, err := strconv.Atoi(k[i+1:])
		if err != nil {
			return nil, fmt.Errorf("bad offsets key %q", k)
		}
		o[TP{Topic: k[:i], Partition: int32(p)}] = v
	}
	return o, nil
}

// Summary property keys written on every commit.
const (
	SummaryCommitID = "kafka.connect.commit-id"
	SummaryVTTS     = "kafka.connect.vtts"
	SummaryTaskID   = "kafka.connect.task-id"
	offsetsPrefix   = "kafka.connect.offsets."
)

// OffsetsSummaryKey returns the snapshot summary key for a connector's consumer group.
func OffsetsSummaryKey(groupID string) string { return offsetsPrefix + groupID }

// CommittedOffsets reads the offsets recorded by groupID on the branch head of tbl. Offsets
// are merged by max on every commit, so the head always holds the full picture.
func CommittedOffsets(tbl *table.Table, branch, key string) (Offsets, error) {
	snap := BranchHead(tbl, branch)
	if key == "" || snap == nil || snap.Summary == nil {
		return Offsets{}, nil
	}
	v, ok := snap.Summary.Properties[key]
	if !ok {
		// Walk back: a foreign commit (compaction, maintenance) may not carry our key.
		for cur := snap; cur != nil && cur.ParentSnapshotID != nil; {
			cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
			if cur != nil && cur.Summary != nil {
				if v, ok = cur.Summary.Properties[key]; ok {
					break
				}
			}
		}
		if !ok {
			return Offsets{}, nil
		}
	}
	return decodeOffsets(v)
}

func BranchHead(tbl *table.Table, branch string) *table.Snapshot {
	if branch == "" || branch == table.MainBranch {
		return tbl.CurrentSnapshot()
	}
	return tbl.SnapshotByName(branch)
}

func HeadID(tbl *table.Table, branch string) int64 {
	if s := BranchHead(tbl, branch); s != nil {
		return s.SnapshotID
	}
	return 0
}

// SortedTPs is a helper for deterministic output.
func SortedTPs(o Offsets) []TP {
	out := make([]TP, 0, len(o))
	for tp := range o {
		out = append(out, tp)
	}
	slices.SortFunc(out, CompareTP)
	return out
}

// CompareTP orders partitions by topic, then number.
func CompareTP(a, b TP) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}
