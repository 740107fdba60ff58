package iceberg

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

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// appendLoadTimeout bounds a table load or schema change made at Put (Put holds the task).
const appendLoadTimeout = 5 * time.Second

// appendRetry is how long a task waits before it loads a table again after the load failed or
// showed that the table cannot take spooled rows (its records go the buffered way meanwhile).
const appendRetry = 10 * time.Second

// appendTable is one task's view of an append table whose rows it converts at Put into
// segments (icetable/spool.go): the table's schema as of the last load, the record schemas known to
// need no schema change, and the open segment per partition.
type appendTable struct {
	w        *icetable.Writer // this task's own handle (the coordinator's writer is used by the rounds)
	usable   bool
	retryAt  time.Time
	schemaID int
	asc      *arrow.Schema
	covered  map[*ice.StructType]error // record schemas checked: nil = fits, else why not
	open     map[icetable.TP]*icetable.Segment
	spool    icerow.SpoolColumns // what the task's router reads of the open segments (taskTables)
	// early says that the table's segments write their rows to data files as they fill (icetable/early.go),
	// to the writer cur until the next round or schema change
	early bool
	cur   *icetable.EarlyFiles
}

// appendEligible reports whether a table's configuration makes every record an appended row
// whatever it carries: no key, no version, no case folding. Prepare then takes the append path
// for all of the table's records, spooled or not.
func appendEligible(o icetable.TableOptions) bool {
	return len(o.IDColumns) == 0 && !o.DeltaMode && o.VersionColumn == "" && o.CDCVersionColumn == "" && !o.CaseInsensitive
}

// appendTarget returns the task's append state of a table when rows of record schema st can be
// spooled into it now, else nil (the record is buffered as a Rec and planned at commit). The
// error is a data error when the table cannot take the record schema (a column of another type).
// Caller holds t.mu.
func (t *Task) appendTarget(ctx context.Context, name string, o icetable.TableOptions, st *ice.StructType) (*appendTable, error) {
	if !appendEligible(o) || st == nil {
		return nil, nil
	}
	a := t.appendTables[name]
	if a == nil {
		a = &appendTable{open: map[icetable.TP]*icetable.Segment{}}
		t.appendTables[name] = a
	}
	now := t.now()
	if !a.usable {
		if now.Before(a.retryAt) {
			return nil, nil
		}
		if !t.loadAppendTable(ctx, name, o, a, st) {
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
		ok, err := t.coverSchema(ctx, a, st)
		var de *icetable.DataError
		if errors.As(err, &de) {
			err = connect.DataErrorf("iceberg table %s: record schema does not fit the table: %v", name, err)
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

// loadAppendTable loads (or auto-creates) the table and takes its schema.
func (t *Task) loadAppendTable(ctx context.Context, name string, o icetable.TableOptions, a *appendTable, st *ice.StructType) bool {
	cat, err := t.coord.tables.Catalog(ctx)
	if err != nil {
		return false
	}
	if a.w == nil {
		a.w = &icetable.Writer{Cat: cat, Ident: catalog.ToIdentifier(name), Opts: o}
	}
	lctx, cancel := context.WithTimeout(ctx, appendLoadTimeout)
	defer cancel()
	if err := a.w.Load(lctx, st); err != nil {
		return false
	}
	return t.takeSchema(a)
}

// takeSchema adopts the loaded table's schema; it seals the open segments of an older schema.
func (t *Task) takeSchema(a *appendTable) bool {
	tbl := a.w.Tbl
	sc := tbl.Schema()
	if len(sc.IdentifierFieldIDs) > 0 {
		return false // keyed table: records with ops are planned as upserts
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil || !icetable.Spoolable(asc) {
		return false
	}
	if a.usable && sc.ID == a.schemaID {
		return true
	}
	for tp, s := range a.open {
		t.sealSegment(s)
		delete(a.open, tp)
	}
	a.endEarly()
	a.usable, a.schemaID, a.asc = true, sc.ID, asc
	a.early = icetable.EarlyEligible(tbl)
	a.covered = map[*ice.StructType]error{}
	return true
}

// coverSchema makes the table's schema take rows of record schema st, as Prepare's schema
// evolution would: nothing to do, or evolve now (one metadata commit) and adopt the new schema.
func (t *Task) coverSchema(ctx context.Context, a *appendTable, st *ice.StructType) (bool, error) {
	need, err := a.w.NeedsEvolution(st)
	if err != nil || !need {
		return err == nil, err
	}
	ectx, cancel := context.WithTimeout(ctx, appendLoadTimeout)
	defer cancel()
	if err := a.w.EvolveTo(ectx, st); err != nil {
		return false, err
	}
	return t.takeSchema(a), nil
}

// spoolRow appends one row to the table's open segment of tp, opening one when needed. It
// returns a data error for a row whose values do not fit the table's columns. Caller holds t.mu.
func (t *Task) spoolRow(name string, a *appendTable, tp icetable.TP, off int64, row icerow.Row) error {
	s := a.open[tp]
	if s == nil {
		var err error
		if s, err = t.newSegment(a, tp); err != nil {
			return err
		}
		a.open[tp] = s
		t.buf[name] = append(t.buf[name], icetable.Rec{Op: icerow.OpInsert, TP: tp, Offset: off, Seg: s})
	}
	t.nbuf++
	t.spoolRows++
	if err := s.Add(row, off); err != nil {
		var de *icetable.DataError
		if errors.As(err, &de) {
			return connect.DataErrorf("iceberg table %s: %v", name, err)
		}
		return err
	}
	return nil
}

// newSegment opens a segment of tp for the table's rows: into the interval's data files when the
// table takes them early, else into a spool file of its own.
func (t *Task) newSegment(a *appendTable, tp icetable.TP) (*icetable.Segment, error) {
	if !a.early {
		return icetable.NewSegment(&t.scratch, t.spoolDir(), tp, a.schemaID, a.asc)
	}
	if a.cur == nil {
		offs, err := t.scratch.Create(t.spoolDir(), "connectd-iceberg-*.offsets")
		if err != nil {
			return nil, err
		}
		a.cur = icetable.StartEarly(a.w.Tbl, a.asc, a.w.Opts, offs, func(err error) { t.lost.CompareAndSwap(nil, &err) })
	}
	return icetable.NewEarlySegment(a.cur, tp, a.schemaID, a.asc), nil
}

// endEarly ends the table's data file writer of the interval, if any: its last file is closed
// while the round runs. Caller holds t.mu.
func (a *appendTable) endEarly() {
	if e := a.cur; e != nil {
		a.cur = nil
		e.End()
		e.ReleaseUnused()
	}
}

// removeSegments deletes the spool files of the segments among bufs (their rows are committed
// or dropped). Caller holds t.mu.
func (t *Task) removeSegments(bufs map[string][]icetable.Rec) {
	for _, recs := range bufs {
		for _, r := range recs {
			if r.Seg != nil {
				t.removeSegment(r.Seg)
			}
		}
	}
}

// removeSegment deletes one segment's file. Caller holds t.mu.
func (t *Task) removeSegment(s *icetable.Segment) {
	t.spoolRows -= s.Rows
	s.Remove()
}

// sealSegment finishes a segment; a failure is kept in the segment and fails the round that
// plans it.
func (t *Task) sealSegment(s *icetable.Segment) {
	if err := s.Seal(); err != nil {
		slog.Warn("iceberg sink: spool file", "err", err)
	}
}

// sealAll seals every open segment (a round drains them). Caller holds t.mu.
func (t *Task) sealAll() {
	for _, a := range t.appendTables {
		for tp, s := range a.open {
			t.sealSegment(s)
			delete(a.open, tp)
		}
		a.endEarly()
	}
}

// abortEarly ends the data file writers of the interval no round has taken (the task stops) and
// removes their files. Caller holds t.mu.
func (t *Task) abortEarly() {
	for _, a := range t.appendTables {
		if a.cur != nil {
			a.cur.Abort()
			a.cur = nil
		}
	}
}

// dropOpen forgets the open segments of partitions that left the task (their Recs are dropped
// with the buffers). Caller holds t.mu.
func (t *Task) dropOpen(gone map[icetable.TP]bool) {
	for _, a := range t.appendTables {
		for tp := range a.open {
			if gone[tp] {
				delete(a.open, tp)
			}
		}
	}
}

// spoolDir is the directory of the task's spool and spill files: the worker's scratch directory.
func (t *Task) spoolDir() string {
	if t.scratchDir != "" {
		return t.scratchDir
	}
	return os.TempDir()
}
