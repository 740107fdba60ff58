package icetable

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/conflict"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// TP identifies a Kafka topic-partition.
type TP struct {
	Topic     string
	Partition int32
}

func (tp TP) String() string { return tp.Topic + "/" + strconv.Itoa(int(tp.Partition)) }

// Rec is one record routed to one table.
type Rec struct {
	Op  icerow.Op
	Row icerow.Row // full row; for deletes at least the id columns
	// Schema is the record's own Iceberg struct (from its Connect schema, or inferred from
	// schemaless JSON). It drives auto-create and schema evolution; nil means "use the table's".
	Schema *ice.StructType
	TP     TP
	Offset int64
	// Seg, when set, stands for the spooled append rows of TP from Offset on (spool.go): Row and
	// Schema are unset, the rows have the table's schema.
	Seg *Segment
	// JSON, when set, is the value of a buffered upsert whose Row is not built (buffered.go): the
	// round plans it by key, and builds its data and delete rows from the bytes. Its Bytes are nil
	// when the bytes are in the task's spill file (key.spill); jsonBytes reads them either way.
	JSON *jsonvalue.Value
	// key, when set, is the key and version of a record buffered as bytes, read from them (bufferJSON,
	// keyRows): what planDelta reads of it unless it looks up live rows or tombstones
	Key *BufferedKey
}

// BufferedKey is the key (keyOf of the converted row) and version of a record buffered as bytes.
type BufferedKey struct {
	Key     string
	Version any
	// where the record's bytes are when not in Rec.JSON.Bytes: n bytes at off in spill
	Spill *JSONSpill
	Off   int64
	Len   int
}

// RecRows counts the rows recs stand for.
func RecRows(recs []Rec) int {
	n := 0
	for _, r := range recs {
		if r.Seg != nil {
			n += r.Seg.Rows
		} else {
			n++
		}
	}
	return n
}

// TableOptions is the resolved per-table configuration.
type TableOptions struct {
	IDColumns       []string
	PartitionBy     []string
	CommitBranch    string
	AutoCreate      bool
	AutoCreateProps map[string]string
	WriteProps      map[string]string
	EvolveSchema    bool
	ForceOptional   bool
	CaseInsensitive bool
	// UpsertMode treats every non-delete record as an update (delete key + insert).
	UpsertMode bool
	// DeltaMode is true when records carry CDC ops (cdc-field or Debezium) or upsert mode is on.
	DeltaMode bool
	// VersionColumn (extension iceberg.tables.upsert-version-column) orders versions of one key:
	// within a commit the highest wins, and a record older than the committed row is dropped.
	VersionColumn string
	// CDCVersionColumn is set when VersionColumn is a position in the change event's envelope
	// (isEnvelopePath): the metadata column that holds each row's normalized version
	// (envelopeVersion), added to the table by the sink.
	CDCVersionColumn string
	// OffsetsKey is the snapshot summary key holding per-partition next offsets.
	OffsetsKey string
	// TargetFileSize for data files (bytes); 0 = table default.
	TargetFileSize int64
	// SortOrder is the sort order of a table the writer creates (iceberg.tables.sort-order). The
	// writer sorts the rows of each data file by the table's own sort order, whatever created it.
	SortOrder []SortTerm
}

// CommitStats describes one table commit.
type CommitStats struct {
	SnapshotID   int64
	DataFiles    int
	DeleteFiles  int
	RowsWritten  int
	RowsDeleted  int // equality-delete rows
	Skipped      int // records at or below the committed offsets (replays)
	StaleDropped int // records older (by version column) than the committed row
	Collapsed    int // versions collapsed by the commit's plan (a caller's buffer may supersede most before)
	Tombstones   int // delete versions recorded in the tombstone table (tombstones.go)
}

// ErrFenced is returned when the table moved under a commit in a way that makes this
// committer's view invalid: the caller must drop its buffers and re-read from the table.
var ErrFenced = errors.New("iceberg commit fenced: table head moved")

// Writer commits batches of records into one table. It holds no state between commits other
// than the table handle; everything that matters lives in the table (offsets in the summary).
type Writer struct {
	Cat   catalog.Catalog
	Ident table.Identifier
	Opts  TableOptions
	Tbl   *table.Table

	Tombs        *Writer // writer of <table>__deletes (tombstones.go), created on first use
	IsTombstones bool    // this writer maintains a tombstone table
}

// Load (re)loads the table; with auto-create it creates it from st when missing.
func (w *Writer) Load(ctx context.Context, st *ice.StructType) error {
	tbl, err := w.Cat.LoadTable(ctx, w.Ident)
	if err != nil {
		if errors.Is(err, catalog.ErrNoSuchTable) && w.Opts.AutoCreate && st != nil {
			tbl, err = CreateTable(ctx, w.Cat, w.Ident, st, w.Opts)
			if errors.Is(err, catalog.ErrTableAlreadyExists) { // another process won the race
				tbl, err = w.Cat.LoadTable(ctx, w.Ident)
			}
		}
		if err != nil {
			return err
		}
	}
	w.Tbl = tbl
	return nil
}

func (w *Writer) idColumns() []string {
	if len(w.Opts.IDColumns) > 0 {
		return w.Opts.IDColumns
	}
	sc := w.Tbl.Schema()
	var out []string
	for _, id := range sc.IdentifierFieldIDs {
		if n, ok := sc.FindColumnName(id); ok {
			out = append(out, n)
		}
	}
	return out
}

// Part is one table's share of a commit round: files written, not yet committed. Prepare
// makes it (on the process that holds the records), Apply commits one or more parts (from any
// number of processes) as one snapshot.
type Part struct {
	// Base is the snapshot id of the branch head the part was planned against (0: none). Apply
	// commits a part only on that very head: its offset filter, its live-row and tombstone
	// lookups were all made against it.
	Base          int64
	SchemaID      int
	Data, Deletes []ice.DataFile
	Stats         CommitStats
	// Tombstones is the part of the table's tombstone table (tombstones.go); Apply commits it
	// before the table itself.
	Tombstones *Part
}

// Files reports whether the part carries files to commit.
func (p *Part) Files() bool { return p != nil && len(p.Data)+len(p.Deletes) > 0 }

// Commit writes recs and commits one snapshot carrying merged offsets (Prepare, then Apply).
// Records whose offset is below the table's committed offset for their partition are skipped:
// this is what makes a replay after a crash (or a zombie's late commit) idempotent, because the
// check runs against the branch head that the compare-and-swap (AssertRefSnapshotID) then pins.
func (w *Writer) Commit(ctx context.Context, recs []Rec, offsets Offsets, props map[string]string) (CommitStats, error) {
	p, err := w.Prepare(ctx, recs)
	if err != nil {
		return p.Stats, err
	}
	if p.Tombstones.Files() {
		// tombstones commit BEFORE the table (tombstones.go, point 2), also when the table
		// itself has nothing to write (a key inserted and deleted within this commit)
		if _, err := w.Tombs.Apply(ctx, []*Part{p.Tombstones}, nil, nil); err != nil {
			w.Tombs.Tbl = nil
			return p.Stats, fmt.Errorf("tombstones: %w", err)
		}
	}
	st, err := w.Apply(ctx, []*Part{p}, offsets, props)
	st.Skipped, st.StaleDropped, st.Collapsed, st.Tombstones = p.Stats.Skipped, p.Stats.StaleDropped, p.Stats.Collapsed, p.Stats.Tombstones
	st.RowsWritten, st.RowsDeleted = p.Stats.RowsWritten, p.Stats.RowsDeleted
	return st, err
}

// Prepare loads (or auto-creates) the table, evolves its schema, drops records below the
// head's committed offsets, plans upserts and deletes, and writes data and delete files. It
// commits nothing to the table (schema changes and tombstone-table creation aside).
//
// A table loaded by an earlier round may have lost its head to snapshot expiry meanwhile (a
// maintenance commit became the head, then an expiry removed the older one and its manifest
// list): planning on it finds a file missing. The table is then loaded again and the round
// planned on the current head.
func (w *Writer) Prepare(ctx context.Context, recs []Rec) (*Part, error) {
	loaded := w.Tbl
	p, err := w.prepare(ctx, recs)
	if err != nil && loaded != nil && errors.Is(err, fs.ErrNotExist) && !p.Files() && p.Tombstones == nil && w.baseGone(ctx, loaded) {
		w.Tbl = nil
		return w.prepare(ctx, recs)
	}
	return p, err
}

// baseGone reports whether the head of loaded is no longer the branch head in the catalog.
func (w *Writer) baseGone(ctx context.Context, loaded *table.Table) bool {
	cur, err := w.Cat.LoadTable(ctx, w.Ident)
	if err != nil {
		return false
	}
	return HeadID(cur, w.Opts.CommitBranch) != HeadID(loaded, w.Opts.CommitBranch)
}

func (w *Writer) prepare(ctx context.Context, recs []Rec) (*Part, error) {
	p := &Part{}
	st := &p.Stats
	if w.Tbl == nil {
		// auto-create from the first full row (a delete may carry only the key)
		var rs *ice.StructType
		for _, r := range recs {
			if r.Schema != nil && (rs == nil || r.Op != icerow.OpDelete) {
				rs = r.Schema
				if r.Op != icerow.OpDelete {
					break
				}
			}
		}
		if err := w.Load(ctx, rs); err != nil {
			return p, err
		}
	}
	if spooledNewerSchema(w.Tbl, recs) {
		// a task evolved the schema when it spooled rows: take the table as it is now
		if err := w.Load(ctx, nil); err != nil {
			return p, err
		}
	}
	if w.Opts.EvolveSchema {
		if err := w.evolve(ctx, recs); err != nil {
			return p, fmt.Errorf("schema evolution: %w", err)
		}
	}
	if err := w.ensureVersionColumn(ctx); err != nil {
		return p, err
	}
	tbl := w.Tbl
	p.Base = HeadID(tbl, w.Opts.CommitBranch)
	p.SchemaID = tbl.Schema().ID
	committed, err := CommittedOffsets(tbl, w.Opts.CommitBranch, w.Opts.OffsetsKey)
	if err != nil {
		return p, err
	}
	live, segs := liveRecs(recs, committed, &st.Skipped)
	if len(live) == 0 && len(segs) == 0 {
		return p, nil
	}
	segs, plans, err := planEarly(ctx, tbl, segs, committed)
	if err != nil {
		return p, err
	}
	for _, pl := range plans {
		st.Skipped += pl.skipped
	}

	ids := w.idColumns()
	delta := len(ids) > 0 && w.Opts.DeltaMode
	for i := 0; i < len(live) && !delta && len(ids) > 0; i++ {
		delta = live[i].Op != icerow.OpInsert
	}
	if len(ids) > 0 && len(segs)+len(plans) > 0 {
		// the table gained identifier fields after its rows were spooled: plan them as records
		for _, s := range segs {
			rs, err := s.recs(committedFrom(committed, s.tp), &st.Skipped)
			if err != nil {
				return p, err
			}
			live = append(live, rs...)
		}
		for _, pl := range plans {
			rs, err := pl.recs(ctx)
			if err != nil {
				return p, err
			}
			live = append(live, rs...)
		}
		segs, plans = nil, nil
	}
	if w.Opts.CaseInsensitive {
		// renamed to the table's columns below: as rows
		if err := decodeAll(live); err != nil {
			return p, err
		}
	}
	var data, dels []*Rec
	if delta {
		// records buffered as bytes stay so through the round: the plan reads their key, the data files
		// are built from the bytes
		_, lookup, tombsOn := w.planReads(ids)
		if err := KeyRows(live, w.planColumns(ids), lookup || tombsOn); err != nil {
			return p, err
		}
		var tombRows []icerow.Row
		data, dels, tombRows, err = w.PlanDelta(ctx, live, ids, st)
		if err != nil {
			return p, err
		}
		// planning may have added StaleDeleteColumn (a schema change, same head)
		tbl = w.Tbl
		p.SchemaID = tbl.Schema().ID
		if len(tombRows) > 0 {
			tp, err := w.prepareTombstones(ctx, ids, tombRows)
			if err != nil {
				return p, fmt.Errorf("tombstones: %w", err)
			}
			p.Tombstones = tp
			st.Tombstones = len(tombRows)
		}
	} else {
		data = make([]*Rec, 0, len(live))
		for i := range live {
			if live[i].Op == icerow.OpDelete {
				continue // append mode: deletes have no row to append (tombstones)
			}
			data = append(data, &live[i])
		}
	}

	if w.Opts.CaseInsensitive {
		normalizeCase(tbl.Schema(), data)
		normalizeCase(tbl.Schema(), dels)
	}
	rewrite := false
	for _, pl := range plans {
		p.Data = append(p.Data, pl.asIs...)
		st.RowsWritten += pl.rows
		rewrite = rewrite || len(pl.rewrite) > 0
	}
	if len(data) > 0 || len(segs) > 0 || rewrite {
		asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
		if err != nil {
			return p, err
		}
		// Batches are read back from the spool (or built from rows) much faster than Parquet encodes
		// them: iceberg-go's default queue of 64 batches per data file writer then holds a few hundred
		// MB of Arrow buffers. Two keep the encoder busy.
		wopts := fileOptions{queue: writerQueueBatches, targetFileSize: w.Opts.TargetFileSize}
		spooled := 0
		src := dataBatches(asc, tbl.Schema().ID, data)
		if len(segs) > 0 {
			src = concatBatches(src, spooledBatches(asc, tbl.Schema().ID, segs, committed, &spooled, &st.Skipped))
		}
		for _, pl := range plans {
			if len(pl.rewrite) > 0 {
				src = concatBatches(src, pl.batches(ctx, asc, tbl.Schema().ID))
			}
		}
		if len(segs) == 0 && !rewrite && Sorts(tbl.SortOrder(), tbl.Schema()) {
			// the round's rows are in memory: each data file's rows in the table's sort order
			src = sortedBatches(ctx, tbl, src)
		}
		for df, err := range writeDataFiles(ctx, tbl, asc, src, wopts) {
			if err != nil {
				return p, fmt.Errorf("write data files: %w", err)
			}
			p.Data = append(p.Data, df)
		}
		st.RowsWritten += len(data) + spooled
	}
	if len(dels) > 0 {
		names, eqIDs, err := w.deleteColumns(ids)
		if err != nil {
			return p, err
		}
		dsc, err := tbl.Schema().Select(true, names...)
		if err != nil {
			return p, err
		}
		dasc, err := table.SchemaToArrowSchema(dsc, nil, true, false)
		if err != nil {
			return p, err
		}
		files, err := tbl.NewTransaction().WriteEqualityDeletes(ctx, eqIDs, dataBatches(dasc, dsc.ID, dels))
		if err != nil {
			return p, fmt.Errorf("write equality deletes: %w", err)
		}
		p.Deletes = files
		st.RowsDeleted = len(dels)
	}
	st.DataFiles, st.DeleteFiles = len(p.Data), len(p.Deletes)
	return p, nil
}

// liveRecs returns the records of recs at or above the committed offsets, and the spooled segments
// (filtered by offset row by row when read): recs itself when it holds nothing else (planning may
// convert a record buffered as bytes, or note what it read of them: it stays the same record), else
// a copy of those records.
func liveRecs(recs []Rec, committed Offsets, skipped *int) ([]Rec, []*Segment) {
	below := func(r Rec) bool {
		off, ok := committed[r.TP]
		return ok && r.Offset < off
	}
	if !slices.ContainsFunc(recs, func(r Rec) bool { return r.Seg != nil || below(r) }) {
		return recs, nil
	}
	live := make([]Rec, 0, len(recs))
	var segs []*Segment
	for _, r := range recs {
		switch {
		case r.Seg != nil:
			segs = append(segs, r.Seg)
		case below(r):
			*skipped++
		default:
			live = append(live, r)
		}
	}
	return live, segs
}

// Apply commits parts as ONE snapshot on the branch head, with offsets merged (by max) into
// the head's offsets in the summary. Every part must have been planned against the current head
// (else ErrFenced: someone committed in between, the parts' records may already be in the
// table); the compare-and-swap pins that head until the catalog commit. Tombstone parts are
// NOT applied here (the caller applies them first, on the tombstone table's writer).
func (w *Writer) Apply(ctx context.Context, parts []*Part, offsets Offsets, props map[string]string) (CommitStats, error) {
	var st CommitStats
	var dataFiles, delFiles []ice.DataFile
	seen := map[string]bool{} // iceberg-go would add a file given twice twice
	for _, p := range parts {
		for _, f := range p.Data {
			if !seen[f.FilePath()] {
				seen[f.FilePath()] = true
				dataFiles = append(dataFiles, f)
			}
		}
		for _, f := range p.Deletes {
			if !seen[f.FilePath()] {
				seen[f.FilePath()] = true
				delFiles = append(delFiles, f)
			}
		}
	}
	st.DataFiles, st.DeleteFiles = len(dataFiles), len(delFiles)
	if len(dataFiles) == 0 && len(delFiles) == 0 {
		// Nothing to write (every record was a replay, a tombstone, or stale). No snapshot: the
		// range is re-read and skipped again after a restart, which is harmless.
		return st, nil
	}
	if w.Tbl == nil {
		if err := w.Load(ctx, nil); err != nil {
			return st, err
		}
	}
	tbl := w.Tbl
	head := HeadID(tbl, w.Opts.CommitBranch)
	for _, p := range parts {
		if p.Files() && p.Base != head {
			w.Tbl = nil
			return st, fmt.Errorf("%w: part planned on snapshot %d, head is %d", ErrFenced, p.Base, head)
		}
	}
	committed, err := CommittedOffsets(tbl, w.Opts.CommitBranch, w.Opts.OffsetsKey)
	if err != nil {
		return st, err
	}
	merged := Offsets{}
	for tp, o := range committed {
		merged[tp] = o
	}
	for tp, o := range offsets {
		if o > merged[tp] {
			merged[tp] = o
		}
	}
	sprops := ice.Properties{}
	for k, v := range props {
		sprops[k] = v
	}
	if w.Opts.OffsetsKey != "" {
		sprops[w.Opts.OffsetsKey] = merged.encode()
	}

	var tx *table.Transaction
	if b := w.Opts.CommitBranch; b != "" && b != table.MainBranch {
		tx = tbl.NewTransactionOnBranch(b)
	} else {
		tx = tbl.NewTransaction()
	}
	if err := tx.AssertRefSnapshotID(""); err != nil {
		return st, err
	}
	rd := tx.NewRowDelta(sprops)
	rd.AddRows(dataFiles...)
	rd.AddDeletes(delFiles...)
	if err := rd.Commit(ctx); err != nil {
		if errors.Is(err, fs.ErrNotExist) && w.baseGone(ctx, tbl) {
			// the parts' base lost its manifest list to snapshot expiry, which never expires a
			// branch head: the head moved since they were planned
			w.Tbl = nil
			return st, fmt.Errorf("%w: snapshot %d was expired: %v", ErrFenced, head, err)
		}
		return st, err
	}
	ntbl, err := tx.Commit(ctx)
	if err != nil {
		w.Tbl = nil // reload next time
		if errors.Is(conflict.Of(err), conflict.ErrHeadMoved) {
			return st, fmt.Errorf("%w: %v", ErrFenced, err)
		}
		return st, err
	}
	w.Tbl = ntbl
	if s := BranchHead(ntbl, w.Opts.CommitBranch); s != nil {
		st.SnapshotID = s.SnapshotID
	}
	return st, nil
}

// deleteColumns returns the columns of equality-delete rows: the id columns followed by any
// partition source columns that are not id columns (so the writer can route each delete to
// the partition holding the row), and the equality field ids.
func (w *Writer) deleteColumns(ids []string) ([]string, []int, error) {
	sc := w.Tbl.Schema()
	names := slices.Clone(ids)
	var eq []int
	for _, n := range ids {
		f, ok := sc.FindFieldByName(n)
		if !ok {
			return nil, nil, defErrorf("id column %q not in table schema", n)
		}
		eq = append(eq, f.ID)
	}
	spec := w.Tbl.Spec()
	for _, pf := range spec.Fields() {
		n, _ := sc.FindColumnName(pf.SourceID())
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, eq, nil
}

// planColumns are the columns planDelta reads of a record: the delete columns (ids and partition
// sources) and the version column.
func (w *Writer) planColumns(ids []string) []string {
	names, _, err := w.deleteColumns(ids)
	if err != nil {
		names = slices.Clone(ids) // planDelta reports the error
	}
	if vc := w.Opts.KeyVersionColumn(); vc != "" && !slices.Contains(names, vc) {
		names = append(names, vc)
	}
	return names
}

// partitionMayMove reports whether a key's partition can change between versions: true when
// some partition source column is not an id column. Then (and for key-only deletes in that
// case) the current location of each key must be looked up before deleting.
func (w *Writer) partitionMayMove(ids []string) bool {
	sc := w.Tbl.Schema()
	spec := w.Tbl.Spec()
	for _, pf := range spec.Fields() {
		n, _ := sc.FindColumnName(pf.SourceID())
		if !slices.Contains(ids, n) {
			return true
		}
	}
	return false
}

// KeyVersionColumn is the table column holding a key's version: the metadata column when the
// version comes from the change event's envelope, else the configured column ("": none).
func (o TableOptions) KeyVersionColumn() string {
	if o.CDCVersionColumn != "" {
		return o.CDCVersionColumn
	}
	return o.VersionColumn
}

// CmpVersion compares two versions of a key; normalized envelope versions compare as strings.
func (o TableOptions) CmpVersion(a, b any) int {
	if o.CDCVersionColumn != "" && a != nil && b != nil {
		return strings.Compare(icerow.ToString(a), icerow.ToString(b))
	}
	return icerow.CompareVersion(a, b)
}

// ensureVersionColumn adds the metadata column of envelope versions to the table when it lacks
// it (a schema change: one metadata commit, no snapshot; rows written before hold null).
func (w *Writer) ensureVersionColumn(ctx context.Context) error {
	col := w.Opts.CDCVersionColumn
	if col == "" || w.IsTombstones {
		return nil
	}
	return w.ensureColumn(ctx, col, ice.PrimitiveTypes.String, "normalized source position of the row's change event (connectd)")
}

// ensureColumn adds an optional top-level column that the sink maintains itself to the table when it lacks
// it: a schema change (one metadata commit, no snapshot; rows written before hold null), retried on a lost
// race, where another process may have added it.
func (w *Writer) ensureColumn(ctx context.Context, col string, typ ice.Type, doc string) error {
	for attempt := 0; ; attempt++ {
		if _, ok := w.Tbl.Schema().FindFieldByName(col); ok {
			return nil
		}
		tx := w.Tbl.NewTransaction()
		if err := tx.UpdateSchema(true, false).AddColumn([]string{col}, typ, doc, false, nil).Commit(); err != nil {
			return &DataError{fmt.Errorf("add column %q to %v: %w", col, w.Ident, err)}
		}
		ntbl, err := tx.Commit(ctx)
		if err == nil {
			w.Tbl = ntbl
			return nil
		}
		if attempt >= 3 {
			return fmt.Errorf("add column %q to %v: %w", col, w.Ident, err)
		}
		if err := w.Load(ctx, nil); err != nil {
			return err
		}
	}
}

// writerQueueBatches is how many record batches wait for each of iceberg-go's data file writers.
const writerQueueBatches = 2

// writeBatchRows is how many rows a batch handed to a data file writer holds (a segment's written
// during the interval, a round's built from its records): while the writer encodes one batch the
// next is built, and they and the writer's queue are in memory besides the buffered records. A
// batch of ~400-byte rows (~400 KiB) stays in a core's cache from its building to its encoding:
// 4,096 rows cost 5% more CPU per record on a 10M append.
const writeBatchRows = 1024

// rowGroupRows bounds the rows of a Parquet row group in the data files this package writes, where
// the table sets no write.parquet.row-group-limit (iceberg-go's default is 1,048,576 rows): a writer
// holds its open row group in memory, encoded page by page, until it is full, and a round's files are
// written while the tasks keep reading. (DuckDB writes row groups of 122,880 rows.)
const rowGroupRows = 32 << 10

// rowGroupLimit is the writer option of rowGroupRows, none when tbl sets its own limit.
func rowGroupLimit(tbl *table.Table) []table.WriteRecordOption {
	if _, set := tbl.Properties()[table.ParquetRowGroupLimitKey]; set {
		return nil
	}
	return []table.WriteRecordOption{table.WithParquetRowGroupLimit(rowGroupRows)}
}

// dataBatches builds the data rows of recs into record batches of schema sc (table schema schemaID):
// a record buffered as bytes straight from them when its shape allows (jsonShape), else from its row.
func dataBatches(sc *arrow.Schema, schemaID int, recs []*Rec) iter.Seq2[arrow.RecordBatch, error] {
	// the writer buffers its row group itself (WriteBuffered): a batch is only what is built while the
	// writer encodes the one before
	const chunk = writeBatchRows
	return func(yield func(arrow.RecordBatch, error) bool) {
		fields := sc.Fields()
		shapes := map[*ice.StructType]*icerow.JSONShape{}
		for i := 0; i < len(recs); i += chunk {
			rec, err := BuildDataRecord(sc, fields, schemaID, recs[i:min(i+chunk, len(recs))], shapes)
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// normalizeCase renames the top-level row keys of recs to the table's column names, ignoring case.
func normalizeCase(sc *ice.Schema, recs []*Rec) {
	names := map[string]string{}
	for _, f := range sc.Fields() {
		names[strings.ToLower(f.Name)] = f.Name
	}
	for _, rec := range recs {
		r := rec.Row
		for k, v := range r {
			if n, ok := names[strings.ToLower(k)]; ok && n != k {
				if _, exists := r[n]; !exists {
					r[n] = v
					delete(r, k)
				}
			}
		}
	}
}
