package icetable

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// appendLoadTimeout bounds a table load or schema change made at Put (Put holds the task).
const appendLoadTimeout = 5 * time.Second

// appendRetry is how long a task waits before it loads a table again after the load failed or
// showed that the table cannot take spooled rows (its records go the buffered way meanwhile).
const appendRetry = 10 * time.Second

// AppendTables is one task's append tables whose rows it converts at Put into segments (spool.go)
// rather than buffering records. Its methods are called under the task's lock.
type AppendTables struct {
	Scratch *ScratchFiles                                  // where spool and offsets files come from
	Dir     string                                         // where files are made; "": os.TempDir
	Catalog func(context.Context) (catalog.Catalog, error) // the catalog the tables are loaded from
	// Lost is told when a data file writer of rows already put failed (early.go): those rows are
	// only in Kafka now
	Lost func(error)
	// Rows counts the rows in segments not yet removed (buffered or in a round): on disk
	Rows   int
	tables map[string]*AppendTable
	last   lastOpen
}

// lastOpen remembers the last open segment looked up: a task's records come in runs of one
// partition and table, and a lookup by partition hashes the topic's name. Anything that opens,
// seals or drops a segment forgets it.
type lastOpen struct {
	name string
	tp   TP
	a    *AppendTable
	s    *Segment
}

// open is the table's open segment of tp, or nil, and the table's state.
func (ts *AppendTables) open(name string, tp TP) (*AppendTable, *Segment) {
	if l := &ts.last; l.s != nil && l.tp == tp && l.name == name {
		return l.a, l.s
	}
	a := ts.tables[name]
	if a == nil {
		return nil, nil
	}
	s := a.open[tp]
	if s != nil {
		ts.last = lastOpen{name: name, tp: tp, a: a, s: s}
	}
	return a, s
}

// AppendTable is a task's view of one append table: its schema as of the last load, the record
// schemas known to need no schema change, and the open segment per partition.
type AppendTable struct {
	w        *Writer // this task's own handle (the coordinator's writer is used by the rounds)
	usable   bool
	retryAt  time.Time
	schemaID int
	asc      *arrow.Schema
	covered  map[*ice.StructType]error // record schemas checked: nil = fits, else why not
	open     map[TP]*Segment
	spool    icerow.SpoolColumns // what the task's router reads of the open segments (Spool)
	// early says that the table's segments write their rows to data files as they fill (early.go),
	// to the writer cur until the next round or schema change
	early bool
	cur   *EarlyFiles
}

// Usable reports whether the table's last load showed that it takes spooled rows.
func (a *AppendTable) Usable() bool { return a.usable }

// WritesEarly reports whether the table's segments write their rows to data files as they fill.
func (a *AppendTable) WritesEarly() bool { return a.early }

// Early is the table's data file writer of the interval, or nil.
func (a *AppendTable) Early() *EarlyFiles { return a.cur }

// Writer is the task's handle of the table, once loaded.
func (a *AppendTable) Writer() *Writer { return a.w }

// AppendEligible reports whether a table's configuration makes every record an appended row
// whatever it carries: no key, no version, no case folding. Prepare then takes the append path
// for all of the table's records, spooled or not.
func AppendEligible(o TableOptions) bool {
	return len(o.IDColumns) == 0 && !o.DeltaMode && o.VersionColumn == "" && o.CDCVersionColumn == "" && !o.CaseInsensitive
}

// Table is the task's append state of a table, or nil when it has none.
func (ts *AppendTables) Table(name string) *AppendTable { return ts.tables[name] }

// Target returns the task's append state of a table when rows of record schema st can be spooled
// into it now, else nil (the record is buffered as a Rec and planned at commit). The error, a
// *DataError, says that the table cannot take the record schema (a column of another type).
func (ts *AppendTables) Target(ctx context.Context, now time.Time, name string, o TableOptions, st *ice.StructType) (*AppendTable, error) {
	if !AppendEligible(o) || st == nil {
		return nil, nil
	}
	a := ts.tables[name]
	if a == nil {
		a = &AppendTable{open: map[TP]*Segment{}}
		if ts.tables == nil {
			ts.tables = map[string]*AppendTable{}
		}
		ts.tables[name] = a
	}
	if !a.usable {
		if now.Before(a.retryAt) {
			return nil, nil
		}
		ts.last = lastOpen{} // a load may seal the open segments
		if !ts.load(ctx, name, o, a, st) {
			a.retryAt = now.Add(appendRetry)
			return nil, nil
		}
	}
	if err, ok := a.covered[st]; ok {
		if err != nil {
			return nil, err
		}
		return a, nil
	}
	if o.EvolveSchema {
		ts.last = lastOpen{} // a schema change seals the open segments
		ok, err := ts.coverSchema(ctx, a, st)
		var de *DataError
		if errors.As(err, &de) {
			a.covered[st] = err
			return nil, err
		}
		if err != nil || !ok {
			if err != nil {
				slog.Debug("iceberg sink: schema change at put failed; records buffered for the commit", "table", name, "err", err)
			}
			a.usable = false
			a.retryAt = now.Add(appendRetry)
			return nil, nil
		}
	}
	a.covered[st] = nil
	return a, nil
}

// load loads (or auto-creates) the table and takes its schema.
func (ts *AppendTables) load(ctx context.Context, name string, o TableOptions, a *AppendTable, st *ice.StructType) bool {
	cat, err := ts.Catalog(ctx)
	if err != nil {
		return false
	}
	if a.w == nil {
		a.w = &Writer{Cat: cat, Ident: catalog.ToIdentifier(name), Opts: o}
	}
	lctx, cancel := context.WithTimeout(ctx, appendLoadTimeout)
	defer cancel()
	if err := a.w.Load(lctx, st); err != nil {
		return false
	}
	return a.takeSchema()
}

// takeSchema adopts the loaded table's schema; it seals the open segments of an older schema.
func (a *AppendTable) takeSchema() bool {
	tbl := a.w.Tbl
	sc := tbl.Schema()
	if len(sc.IdentifierFieldIDs) > 0 {
		return false // keyed table: records with ops are planned as upserts
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil || !Spoolable(asc) {
		return false
	}
	if a.usable && sc.ID == a.schemaID {
		return true
	}
	a.sealOpen()
	a.usable, a.schemaID, a.asc = true, sc.ID, asc
	a.early = EarlyEligible(tbl)
	a.covered = map[*ice.StructType]error{}
	return true
}

// coverSchema makes the table's schema take rows of record schema st, as Prepare's schema
// evolution would: nothing to do, or evolve now (one metadata commit) and adopt the new schema.
func (ts *AppendTables) coverSchema(ctx context.Context, a *AppendTable, st *ice.StructType) (bool, error) {
	need, err := a.w.NeedsEvolution(st)
	if err != nil || !need {
		return err == nil, err
	}
	ectx, cancel := context.WithTimeout(ctx, appendLoadTimeout)
	defer cancel()
	if err := a.w.EvolveTo(ectx, st); err != nil {
		return false, err
	}
	return a.takeSchema(), nil
}

// Open is the table's open segment of tp, or nil.
func (ts *AppendTables) Open(name string, tp TP) *Segment {
	_, s := ts.open(name, tp)
	return s
}

// Segment returns the table's open segment of tp, opening one when needed (opened): into the
// interval's data files when the table takes them early, else into a spool file of its own.
func (ts *AppendTables) Segment(a *AppendTable, tp TP) (s *Segment, opened bool, err error) {
	if s = a.open[tp]; s != nil {
		return s, false, nil
	}
	if !a.early {
		s, err = NewSegment(ts.Scratch, ts.dir(), tp, a.schemaID, a.asc)
		if err != nil {
			return nil, false, err
		}
	} else {
		if a.cur == nil {
			offs, err := ts.Scratch.Create(ts.dir(), "connectd-iceberg-*.offsets")
			if err != nil {
				return nil, false, err
			}
			a.cur = StartEarly(a.w.Tbl, a.asc, a.w.Opts, offs, ts.Lost)
		}
		s = NewEarlySegment(a.cur, tp, a.schemaID, a.asc)
	}
	a.open[tp] = s
	return s, true, nil
}

// Spool is the schema of the table's open segment of tp when the table takes spooled rows and the
// segment is of the table's current schema, for the task's router; else nil.
func (ts *AppendTables) Spool(name string, tp TP) *icerow.SpoolColumns {
	a, seg := ts.open(name, tp)
	if a == nil || !a.usable || seg == nil || seg.SchemaID != a.schemaID {
		return nil
	}
	a.spool = icerow.SpoolColumns{SchemaID: a.schemaID, Fields: seg.Fields, Fits: a.covered}
	return &a.spool
}

func (ts *AppendTables) dir() string {
	if ts.Dir != "" {
		return ts.Dir
	}
	return os.TempDir()
}

// endEarly ends the table's data file writer of the interval, if any: its last file is closed
// while the round runs.
func (a *AppendTable) endEarly() {
	if e := a.cur; e != nil {
		a.cur = nil
		e.End()
		e.ReleaseUnused()
	}
}

// sealOpen seals the table's open segments and ends its data file writer of the interval.
func (a *AppendTable) sealOpen() {
	for tp, s := range a.open {
		sealSegment(s)
		delete(a.open, tp)
	}
	a.endEarly()
}

// sealSegment finishes a segment; a failure is kept in the segment and fails the round that
// plans it.
func sealSegment(s *Segment) {
	if err := s.Seal(); err != nil {
		slog.Warn("iceberg sink: spool file", "err", err)
	}
}

// SealAll seals every open segment (a round drains them).
func (ts *AppendTables) SealAll() {
	ts.last = lastOpen{}
	for _, a := range ts.tables {
		a.sealOpen()
	}
}

// RemoveSegments deletes the spool files of the segments among bufs (their rows are committed
// or dropped).
func (ts *AppendTables) RemoveSegments(bufs map[string][]Rec) {
	for _, recs := range bufs {
		for _, r := range recs {
			if r.Seg != nil {
				ts.RemoveSegment(r.Seg)
			}
		}
	}
}

// RemoveSegment deletes one segment's file.
func (ts *AppendTables) RemoveSegment(s *Segment) {
	ts.Rows -= s.Rows
	s.Remove()
}

// AbortEarly ends the data file writers of the interval no round has taken (the task stops) and
// removes their files.
func (ts *AppendTables) AbortEarly() {
	for _, a := range ts.tables {
		if a.cur != nil {
			a.cur.Abort()
			a.cur = nil
		}
	}
}

// DropOpen forgets the open segments of partitions that left the task (their Recs are dropped
// with the buffers).
func (ts *AppendTables) DropOpen(gone map[TP]bool) {
	ts.last = lastOpen{}
	for _, a := range ts.tables {
		for tp := range a.open {
			if gone[tp] {
				delete(a.open, tp)
			}
		}
	}
}
