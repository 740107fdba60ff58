package maintenance

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"sort"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/conflict"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// SummaryMaintenance is the snapshot summary property naming the maintenance action that wrote
// the snapshot.
const SummaryMaintenance = "connectd.maintenance"

// CompactOptions tunes a compaction.
type CompactOptions struct {
	// Branch to compact ("" is main): the sink's commit branch.
	Branch string
	// TargetFileSize of the rewritten files; 0 takes the table's write.target-file-size-bytes.
	TargetFileSize int64
	// MinInputFiles is how many small files (below 3/4 of the target) a partition without
	// deletes needs before it is rewritten; 0 means 2. A partition with delete files that apply
	// to its data is always rewritten.
	MinInputFiles int
	// CommitRetries is how many times a commit that lost the race against another commit is
	// re-validated and retried before the rewrite is abandoned; 0 means 3.
	CommitRetries int
}

// CompactResult reports one compaction.
type CompactResult struct {
	StartSnapshotID    int64  `json:"start_snapshot_id"`
	SnapshotID         int64  `json:"snapshot_id,omitempty"`
	Partitions         int    `json:"partitions"`
	DataFilesRewritten int    `json:"data_files_rewritten"`
	DataFilesAdded     int    `json:"data_files_added"`
	DeleteFilesRemoved int    `json:"delete_files_removed"`
	BytesBefore        int64  `json:"bytes_before"`
	BytesAfter         int64  `json:"bytes_after"`
	Attempts           int    `json:"attempts,omitempty"`
	Abandoned          string `json:"abandoned,omitempty"`
}

// Rewrite is a compaction whose files are written but not committed: PlanCompaction makes it,
// Commit publishes it as one `replace` snapshot, Abort removes its files.
//
// Correctness while the sink keeps committing:
//   - the rewritten rows are read at the starting snapshot with every delete applied, and the new
//     files carry the starting snapshot's sequence number as their data sequence number, so an
//     equality delete committed after the rewrite started (a higher sequence number) still
//     applies to them, exactly as it applied to the files they replace;
//   - a delete file is removed only when no data file outside the rewrite can be reached by it
//     (same partition, or any partition for a global delete, with an older data sequence number);
//   - at commit, every snapshot committed since the start is inspected: one that removed a file
//     of the rewrite or added position deletes (which name files by path) makes the rewrite
//     abandoned; appends and equality deletes are fine. The commit then pins the head it
//     validated (compare-and-swap), so nothing slips in between; a lost race is re-validated
//     and retried.
type Rewrite struct {
	cat    catalog.Catalog
	ident  table.Identifier
	opts   CompactOptions
	fs     iceio.IO
	base   *table.Snapshot
	old    []ice.DataFile
	added  []ice.DataFile
	dead   []ice.DataFile
	paths  map[string]bool // old data files and dead delete files
	result CompactResult
}

// Result is what the rewrite did so far.
func (r *Rewrite) Result() CompactResult { return r.result }

// Compact rewrites the small and delete-laden data files of ident's branch into target-size
// files with their deletes applied, and removes the delete files nothing else needs, in one
// `replace` snapshot. Nothing to do is not an error (a zero result).
func Compact(ctx context.Context, cat catalog.Catalog, ident table.Identifier, opts CompactOptions) (CompactResult, error) {
	rw, err := PlanCompaction(ctx, cat, ident, opts)
	if err != nil || rw == nil {
		if rw != nil {
			return rw.result, err
		}
		return CompactResult{}, err
	}
	return rw.Commit(ctx)
}

// PlanCompaction selects the files to rewrite at the branch head and writes the new files; it
// returns nil when there is nothing to compact.
func PlanCompaction(ctx context.Context, cat catalog.Catalog, ident table.Identifier, opts CompactOptions) (*Rewrite, error) {
	if opts.MinInputFiles <= 0 {
		opts.MinInputFiles = 2
	}
	if opts.CommitRetries <= 0 {
		opts.CommitRetries = 3
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", name(ident), err)
	}
	base := branchHead(tbl, opts.Branch)
	if base == nil {
		return nil, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	inv, err := readInventory(fs, base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name(ident), err)
	}
	target := opts.TargetFileSize
	if target <= 0 {
		target = int64(tbl.Properties().GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault))
	}
	meta := tbl.Metadata()
	curSpec := meta.DefaultPartitionSpec()
	// A delete file reaches the data files of its partition (same spec and partition values), or
	// of every partition when its spec is unpartitioned (a global equality delete); an equality
	// delete only older data (lower data sequence number), a position delete also data of its
	// own sequence number. Position deletes are matched by partition, not by the path they name.
	isGlobal := func(d ice.DataFile) bool {
		spec := meta.PartitionSpecByID(int(d.SpecID()))
		return spec == nil || spec.IsUnpartitioned()
	}
	reaches := func(del liveFile, dataSeq int64) bool {
		if del.file.ContentType() == ice.EntryContentEqDeletes {
			return dataSeq < del.seq
		}
		return dataSeq <= del.seq
	}
	dataKey := make([]string, len(inv.data))
	for i, f := range inv.data {
		dataKey[i] = partitionKey(f.file)
	}
	var globalDeletes []liveFile
	deletesByKey := map[string][]liveFile{}
	for _, d := range inv.deletes {
		if isGlobal(d.file) {
			globalDeletes = append(globalDeletes, d)
		} else {
			k := partitionKey(d.file)
			deletesByKey[k] = append(deletesByKey[k], d)
		}
	}
	hasDeletes := func(i int) bool {
		for _, ds := range [][]liveFile{deletesByKey[dataKey[i]], globalDeletes} {
			for _, d := range ds {
				if reaches(d, inv.data[i].seq) {
					return true
				}
			}
		}
		return false
	}

	byPart := map[string][]int{}
	for i, f := range inv.data {
		if int(f.file.SpecID()) != curSpec {
			continue // rewritten files take the current spec: files of an older spec stay as they are
		}
		byPart[dataKey[i]] = append(byPart[dataKey[i]], i)
	}
	selected := map[string]bool{}
	var parts []string
	for k, files := range byPart {
		var pick []int
		withDeletes := false
		for _, i := range files {
			del := hasDeletes(i)
			if del || inv.data[i].file.FileSizeBytes() < target*3/4 {
				pick = append(pick, i)
				withDeletes = withDeletes || del
			}
		}
		if len(pick) == 0 || (!withDeletes && len(pick) < opts.MinInputFiles) {
			continue
		}
		parts = append(parts, k)
		for _, i := range pick {
			selected[inv.data[i].file.FilePath()] = true
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	sort.Strings(parts)

	rw := &Rewrite{cat: cat, ident: ident, opts: opts, fs: fs, base: base, paths: map[string]bool{}}
	rw.result.StartSnapshotID = base.SnapshotID
	rw.result.Partitions = len(parts)
	// the lowest data sequence number of the data files that stay, per partition and overall: a
	// delete file is still needed when it reaches one of them
	const none = int64(1<<63 - 1)
	minStaying, minStayingAll := map[string]int64{}, none
	for i, f := range inv.data {
		if selected[f.file.FilePath()] {
			rw.old = append(rw.old, f.file)
			rw.paths[f.file.FilePath()] = true
			rw.result.BytesBefore += f.file.FileSizeBytes()
			continue
		}
		if m, ok := minStaying[dataKey[i]]; !ok || f.seq < m {
			minStaying[dataKey[i]] = f.seq
		}
		minStayingAll = min(minStayingAll, f.seq)
	}
	for _, d := range inv.deletes {
		lowest := minStayingAll
		if !isGlobal(d.file) {
			if m, ok := minStaying[partitionKey(d.file)]; ok {
				lowest = m
			} else {
				lowest = none
			}
		}
		if lowest == none || !reaches(d, lowest) {
			rw.dead = append(rw.dead, d.file)
			rw.paths[d.file.FilePath()] = true
		}
	}
	rw.result.DataFilesRewritten = len(rw.old)
	rw.result.DeleteFilesRemoved = len(rw.dead)

	tasks, err := tbl.Scan(table.WithSnapshotID(base.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("planning %s: %w", name(ident), err)
	}
	groups := map[string]*table.CompactionTaskGroup{}
	for _, t := range tasks {
		if !selected[t.File.FilePath()] {
			continue
		}
		k := partitionKey(t.File)
		g := groups[k]
		if g == nil {
			g = &table.CompactionTaskGroup{PartitionKey: k}
			groups[k] = g
		}
		g.Tasks = append(g.Tasks, t)
		g.TotalSizeBytes += t.Length
	}
	planned := map[string]bool{}
	for _, g := range groups {
		for _, t := range g.Tasks {
			planned[t.File.FilePath()] = true
		}
	}
	for _, f := range rw.old {
		if !planned[f.FilePath()] {
			// replacing a file whose rows were not read would lose them
			return nil, fmt.Errorf("compacting %s: the scan of snapshot %d has no task for %s", name(ident), base.SnapshotID, f.FilePath())
		}
	}
	sorted := icetable.Sorts(tbl.SortOrder(), tbl.Schema())
	for _, k := range parts {
		g := groups[k]
		var files []ice.DataFile
		if sorted {
			files, err = rewriteSorted(ctx, tbl, *g, target)
		} else {
			var gr table.CompactionGroupResult
			gr, err = table.ExecuteCompactionGroup(ctx, tbl, *g, table.WithCompactionTargetFileSize(target))
			files = gr.NewDataFiles
		}
		rw.added = append(rw.added, files...)
		if err != nil {
			_ = rw.Abort()
			return nil, fmt.Errorf("rewriting %s %s: %w", name(ident), k, err)
		}
	}
	for _, f := range rw.added {
		rw.result.BytesAfter += f.FileSizeBytes()
	}
	rw.result.DataFilesAdded = len(rw.added)
	return rw, nil
}

// errConflict is a concurrent change that the rewrite cannot be committed over.
type errConflict struct{ reason string }

func (e errConflict) Error() string { return e.reason }

// errNotCommitted is a failure before anything was sent to the catalog.
type errNotCommitted struct{ err error }

func (e errNotCommitted) Error() string { return e.err.Error() }
func (e errNotCommitted) Unwrap() error { return e.err }

// Commit publishes the rewrite on the branch head, re-validating against what was committed
// since it started (see Rewrite). A rewrite that conflicts is abandoned: its files are removed
// and the result says why; the table is unchanged and the error is nil.
func (r *Rewrite) Commit(ctx context.Context) (CompactResult, error) {
	for attempt := 1; attempt <= r.opts.CommitRetries+1; attempt++ {
		r.result.Attempts = attempt
		snap, err := r.commitOnce(ctx)
		var c errConflict
		var nc errNotCommitted
		switch {
		case err == nil:
			r.result.SnapshotID = snap
			return r.result, nil
		case errors.As(err, &c):
			r.result.Abandoned = c.reason
			return r.result, r.Abort()
		case errors.As(err, &nc):
			return r.result, errors.Join(fmt.Errorf("committing compaction of %s: %w", name(r.ident), nc.err), r.Abort())
		case errors.Is(err, conflict.ErrHeadMoved), errors.Is(err, table.ErrConflictingDeleteFiles):
			continue // another commit won the race: re-validate against the new head
		default:
			// The catalog may or may not have taken the commit: the new files stay (orphan
			// removal takes them if they are not referenced).
			return r.result, fmt.Errorf("committing compaction of %s: %w", name(r.ident), err)
		}
	}
	r.result.Abandoned = fmt.Sprintf("lost the commit race %d times", r.opts.CommitRetries+1)
	return r.result, r.Abort()
}

func (r *Rewrite) commitOnce(ctx context.Context) (int64, error) {
	tbl, err := r.cat.LoadTable(ctx, r.ident)
	if err != nil {
		return 0, errNotCommitted{fmt.Errorf("loading %s: %w", name(r.ident), err)}
	}
	head := branchHead(tbl, r.opts.Branch)
	if head == nil {
		return 0, errConflict{"the branch has no snapshot any more"}
	}
	if err := r.validateSince(tbl, head); err != nil {
		var c errConflict
		if errors.As(err, &c) {
			return 0, err
		}
		return 0, errNotCommitted{err}
	}
	props := ice.Properties{SummaryMaintenance: "compaction"}
	for k, v := range sinkSummary(tbl, head) {
		props[k] = v
	}
	branch := r.opts.Branch
	if branch == "" {
		branch = table.MainBranch
	}
	tx, err := tbl.NewTransactionOnBranchWithError(branch)
	if err != nil {
		return 0, errNotCommitted{err}
	}
	if err := tx.AssertRefSnapshotID(branch); err != nil {
		return 0, errNotCommitted{err}
	}
	rw := tx.NewRewrite(props).DataSequenceNumber(r.base.SequenceNumber)
	for _, f := range r.old {
		rw.DeleteFile(f)
	}
	for _, f := range r.added {
		rw.AddDataFile(f)
	}
	for _, f := range r.dead {
		rw.DeleteFile(f)
	}
	if err := rw.Commit(ctx); err != nil {
		if strings.Contains(err.Error(), "do not belong to the table") {
			return 0, errConflict{err.Error()}
		}
		return 0, errNotCommitted{fmt.Errorf("staging: %w", err)}
	}
	ntbl, err := tx.Commit(ctx)
	if err != nil {
		return 0, conflict.Of(err)
	}
	if s := branchHead(ntbl, r.opts.Branch); s != nil {
		return s.SnapshotID, nil
	}
	return 0, nil
}

// validateSince inspects every snapshot between the rewrite's start and head.
func (r *Rewrite) validateSince(tbl *table.Table, head *table.Snapshot) error {
	var since []*table.Snapshot
	for cur := head; cur.SnapshotID != r.base.SnapshotID; {
		since = append(since, cur)
		if cur.ParentSnapshotID == nil {
			return errConflict{fmt.Sprintf("snapshot %d is no longer an ancestor of the head", r.base.SnapshotID)}
		}
		if cur = tbl.SnapshotByID(*cur.ParentSnapshotID); cur == nil {
			return errConflict{fmt.Sprintf("snapshot %d is no longer an ancestor of the head", r.base.SnapshotID)}
		}
	}
	for _, s := range since {
		manifests, err := s.Manifests(r.fs)
		if err != nil {
			return fmt.Errorf("reading snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range manifests {
			if m.SnapshotID() != s.SnapshotID {
				continue // carried over from an earlier snapshot
			}
			for e, err := range m.Entries(r.fs, false) {
				if err != nil {
					return fmt.Errorf("reading manifest %s: %w", m.FilePath(), err)
				}
				if e.SnapshotID() != s.SnapshotID {
					continue
				}
				df := e.DataFile()
				switch {
				case e.Status() == ice.EntryStatusDELETED && r.paths[df.FilePath()]:
					return errConflict{fmt.Sprintf("snapshot %d removed %s", s.SnapshotID, df.FilePath())}
				case e.Status() == ice.EntryStatusADDED && df.ContentType() == ice.EntryContentPosDeletes:
					return errConflict{fmt.Sprintf("snapshot %d added position deletes %s", s.SnapshotID, df.FilePath())}
				}
			}
		}
	}
	return nil
}

// Abort removes the rewrite's new files (it must not have been committed).
func (r *Rewrite) Abort() error {
	var errs error
	for _, f := range r.added {
		if err := r.fs.Remove(f.FilePath()); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			errs = errors.Join(errs, err)
		}
	}
	r.added = nil
	return errs
}

func name(ident table.Identifier) string { return strings.Join(ident, ".") }
