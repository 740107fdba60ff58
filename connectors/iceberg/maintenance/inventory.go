package maintenance

import (
	"context"
	"fmt"
	"sort"
	"strings"

	ice "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// liveFile is a file of a snapshot with the data sequence number of its manifest entry, which
// decides which delete files apply to it.
type liveFile struct {
	file ice.DataFile
	seq  int64
}

// inventory lists the live data and delete files of one snapshot.
type inventory struct {
	data, deletes []liveFile
}

func readInventory(fs iceio.IO, snap *table.Snapshot) (inventory, error) {
	var inv inventory
	if snap == nil {
		return inv, nil
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return inv, fmt.Errorf("reading manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return inv, fmt.Errorf("reading manifest %s: %w", m.FilePath(), err)
			}
			lf := liveFile{file: e.DataFile(), seq: e.SequenceNum()}
			if lf.file.ContentType() == ice.EntryContentData {
				inv.data = append(inv.data, lf)
			} else {
				inv.deletes = append(inv.deletes, lf)
			}
		}
	}
	return inv, nil
}

// FileStats counts the live files of a table's current snapshot.
type FileStats struct {
	SnapshotID        int64 `json:"snapshot_id"`
	Snapshots         int   `json:"snapshots"`
	DataFiles         int   `json:"data_files"`
	DataBytes         int64 `json:"data_bytes"`
	DataRecords       int64 `json:"data_records"`
	DeleteFiles       int   `json:"delete_files"`
	EqualityDeletes   int   `json:"equality_delete_files"`
	DeleteBytes       int64 `json:"delete_bytes"`
	DeleteRecords     int64 `json:"delete_records"`
	PartitionsWithDel int   `json:"partitions_with_deletes"`
}

// Stats reads the live files of branch's head of tbl (branch "" is main).
func Stats(ctx context.Context, tbl *table.Table, branch string) (FileStats, error) {
	st := FileStats{Snapshots: len(tbl.Metadata().Snapshots())}
	snap := branchHead(tbl, branch)
	if snap == nil {
		return st, nil
	}
	st.SnapshotID = snap.SnapshotID
	fs, err := tbl.FS(ctx)
	if err != nil {
		return st, err
	}
	inv, err := readInventory(fs, snap)
	if err != nil {
		return st, err
	}
	for _, f := range inv.data {
		st.DataFiles++
		st.DataBytes += f.file.FileSizeBytes()
		st.DataRecords += f.file.Count()
	}
	parts := map[string]bool{}
	for _, f := range inv.deletes {
		st.DeleteFiles++
		if f.file.ContentType() == ice.EntryContentEqDeletes {
			st.EqualityDeletes++
		}
		st.DeleteBytes += f.file.FileSizeBytes()
		st.DeleteRecords += f.file.Count()
		parts[partitionKey(f.file)] = true
	}
	st.PartitionsWithDel = len(parts)
	return st, nil
}

func branchHead(tbl *table.Table, branch string) *table.Snapshot {
	if branch == "" || branch == table.MainBranch {
		return tbl.CurrentSnapshot()
	}
	return tbl.SnapshotByName(branch)
}

// partitionKey identifies a file's partition: its spec id and partition values.
func partitionKey(f ice.DataFile) string {
	p := f.Partition()
	ids := make([]int, 0, len(p))
	for id := range p {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "spec=%d", f.SpecID())
	for _, id := range ids {
		fmt.Fprintf(&b, ",%d=%v", id, p[id])
	}
	return b.String()
}
