package icetable

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	ice "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// earlyQueueBatches is how many segment batches wait for a task's data file writer besides the one
// iceberg-go's writer queues: none, Put hands a batch over when the writer takes it, rather than
// holding more rows in memory when the encoder falls behind.
const earlyQueueBatches = 0

// EarlyFiles is one task's data files of one unpartitioned append table, written from its
// segments' batches while the commit interval runs (one of iceberg-go's rolling writers, as the
// JVM sink's task writers do), and which rows of which segment the files hold, in order. The
// round commits a file as it is when it still wants every row in it, and writes the rows it
// wants again when not (plan): rows below the head's offsets for their partition (another
// committer took them) and rows of segments dropped since (a revoked partition). The decision is
// the round's, against the head it commits on, as for spooled rows; written files a round does
// not take are orphans. This replaces the spool's copy of the rows, its write to local disk and
// reading it back.
type EarlyFiles struct {
	tbl   *table.Table // the table as loaded when the writer began: its location, spec and schema
	asc   *arrow.Schema
	in    chan arrow.RecordBatch
	Done  chan struct{} // closed when the writer has ended
	ended bool          // in is closed

	mu    sync.Mutex
	files []ice.DataFile // in row order; final once done is closed
	err   error

	Runs []earlyRun // in row order
	rows int64      // rows sent to the writer
	Offs scratchFile
	ow   *bufio.Writer // each row's Kafka offset, 8 bytes little-endian, in row order
	ob   []byte
	segs int         // segments not yet removed
	lost func(error) // called once when the writer fails
}

// earlyRun is rows of one segment sent as one batch: their Kafka offsets rise from first to last.
type earlyRun struct {
	seg         *Segment
	at          int64 // the run's first row among the files' rows
	n           int64
	first, last int64
}

// EarlyEligible reports whether a table's rows can be written to data files during the interval:
// one rolling writer keeps their order only for an unpartitioned, unsorted table.
func EarlyEligible(tbl *table.Table) bool {
	return tbl.Spec().IsUnpartitioned() && tbl.SortOrder().IsUnsorted()
}

// StartEarly starts a writer of data files of tbl taking batches of schema asc; offs keeps the
// rows' offsets.
func StartEarly(tbl *table.Table, asc *arrow.Schema, o TableOptions, offs scratchFile, lost func(error)) *EarlyFiles {
	e := &EarlyFiles{
		tbl: tbl, asc: asc, in: make(chan arrow.RecordBatch, earlyQueueBatches), Done: make(chan struct{}),
		Offs: offs, ow: bufio.NewWriterSize(offs, 64<<10), lost: lost,
	}
	go e.write(context.Background(), fileOptions{queue: 1, targetFileSize: o.TargetFileSize}) // see earlyQueueBatches
	return e
}

func (e *EarlyFiles) write(ctx context.Context, opts fileOptions) {
	defer close(e.Done)
	src := func(yield func(arrow.RecordBatch, error) bool) {
		for b := range e.in {
			if !yield(b, nil) {
				return
			}
		}
	}
	for df, err := range writeDataFiles(ctx, e.tbl, e.asc, src, opts) {
		if err != nil {
			e.fail(fmt.Errorf("iceberg: write data file of table %s: %w", strings.Join(e.tbl.Identifier(), "."), err))
			break
		}
		e.mu.Lock()
		e.files = append(e.files, df)
		e.mu.Unlock()
	}
	for b := range e.in { // after a failure: senders never block, their batches are freed
		b.Release()
	}
}

// failed is the writer's error, if it failed.
func (e *EarlyFiles) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// fail records the writer's first error and reports it to the task: its rows are lost here.
func (e *EarlyFiles) fail(err error) {
	// one error for every reader: Put may see it through add before the task sees it through lost
	err = fmt.Errorf("%w; the task restarts from its committed offsets", err)
	e.mu.Lock()
	first := e.err == nil
	if first {
		e.err = err
	}
	e.mu.Unlock()
	if first && e.lost != nil {
		e.lost(err)
	}
}

// Add sends rows of segment s (b, none of them bad; their offsets offs) to the writer; it takes b.
// Caller holds the task's mu.
func (e *EarlyFiles) add(s *Segment, b arrow.RecordBatch, offs []int64) error {
	if err := e.failed(); err != nil {
		b.Release()
		return err
	}
	e.Runs = append(e.Runs, earlyRun{seg: s, at: e.rows, n: int64(len(offs)), first: offs[0], last: offs[len(offs)-1]})
	e.rows += int64(len(offs))
	e.ob = e.ob[:0]
	for _, o := range offs {
		e.ob = binary.LittleEndian.AppendUint64(e.ob, uint64(o))
	}
	if _, err := e.ow.Write(e.ob); err != nil {
		b.Release()
		err = fmt.Errorf("iceberg offsets file: %w", err)
		e.fail(err)
		return err
	}
	e.in <- b
	return nil
}

// End tells the writer that no rows follow: it closes its last file. Caller holds the task's mu.
func (e *EarlyFiles) End() {
	if e.ended {
		return
	}
	e.ended = true
	close(e.in)
	if err := e.ow.Flush(); err != nil {
		e.fail(fmt.Errorf("iceberg offsets file: %w", err))
	}
}

// Abort ends a writer no round has taken (the task stops) and removes its files once it has closed
// them, in the background: no table references them. Caller holds the task's mu.
func (e *EarlyFiles) Abort() {
	e.End()
	e.segs = 0
	e.ReleaseUnused()
	go func() {
		<-e.Done
		fs, err := e.tbl.FS(context.Background())
		if err != nil {
			return
		}
		e.mu.Lock()
		files := e.files
		e.mu.Unlock()
		for _, f := range files {
			_ = fs.Remove(f.FilePath())
		}
	}()
}

// segmentGone notes that one of the writer's segments was removed: no round takes the files once
// the last is, and the writer has ended. Caller holds the task's mu.
func (e *EarlyFiles) segmentGone() {
	e.segs--
	e.ReleaseUnused()
}

// ReleaseUnused gives the offsets file back when no segment of the ended writer is left: its
// files are committed, or orphans. Caller holds the task's mu.
func (e *EarlyFiles) ReleaseUnused() {
	if e.segs == 0 && e.ended && e.Offs.File != nil {
		e.Offs.release(e.failed() != nil)
		e.Offs.File = nil
	}
}

// Result waits for the writer and returns its files.
func (e *EarlyFiles) Result(ctx context.Context) ([]ice.DataFile, error) {
	if !e.ended {
		return nil, errors.New("iceberg: data files of rows still being put")
	}
	select {
	case <-e.Done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.files, e.err
}

// earlyPlan is what a round takes of one writer's files.
type earlyPlan struct {
	e       *EarlyFiles
	asIs    []ice.DataFile // committed as they are
	rewrite []earlySpan    // files whose wanted rows are written again
	drop    []int64        // per run: how many of its first rows are not wanted
	rows    int            // rows taken, either way
	skipped int            // rows below the head's offsets
}

// earlySpan is a data file and the index of its first row among the writer's rows.
type earlySpan struct {
	f  ice.DataFile
	at int64
}

// plan decides, against the head tbl whose offsets are committed, which files go in as they are
// and which rows are written again; live holds the segments the round takes.
func (e *EarlyFiles) plan(ctx context.Context, tbl *table.Table, live map[*Segment]bool, committed Offsets) (*earlyPlan, error) {
	files, err := e.Result(ctx)
	if err != nil {
		return nil, err
	}
	p := &earlyPlan{e: e, drop: make([]int64, len(e.Runs))}
	for k, r := range e.Runs {
		if !live[r.seg] {
			p.drop[k] = r.n
			continue
		}
		cut := committedFrom(committed, r.seg.tp)
		switch {
		case cut <= r.first:
		case cut > r.last:
			p.drop[k] = r.n
		default:
			if p.drop[k], err = e.below(r, cut); err != nil {
				return nil, err
			}
		}
		p.skipped += int(p.drop[k])
	}
	// files of another table (dropped and created again) or of another spec go in by rewrite
	spec, was := tbl.Spec(), e.tbl.Spec()
	same := tbl.Metadata().TableUUID() == e.tbl.Metadata().TableUUID() && EarlyEligible(tbl) && spec.ID() == was.ID()
	var at int64
	k := 0
	for _, f := range files {
		a, b := at, at+f.Count()
		for k < len(e.Runs) && e.Runs[k].at+e.Runs[k].n <= a {
			k++
		}
		var kept int64
		for j := k; j < len(e.Runs) && e.Runs[j].at < b; j++ {
			r := e.Runs[j]
			if lo, hi := max(a, r.at+p.drop[j]), min(b, r.at+r.n); hi > lo {
				kept += hi - lo
			}
		}
		switch {
		case kept == f.Count() && same:
			p.asIs = append(p.asIs, f)
		case kept > 0:
			p.rewrite = append(p.rewrite, earlySpan{f, a})
		}
		p.rows += int(kept)
		at = b
	}
	if at != e.rows {
		return nil, fmt.Errorf("iceberg: data files hold %d rows of the %d written", at, e.rows)
	}
	return p, nil
}

// below counts the rows of run r whose offset is below cut (a prefix: offsets rise).
func (e *EarlyFiles) below(r earlyRun, cut int64) (int64, error) {
	offs, err := e.offsets(r)
	if err != nil {
		return 0, err
	}
	var n int64
	for n < int64(len(offs)) && offs[n] < cut {
		n++
	}
	return n, nil
}

// offsets reads the Kafka offsets of run r's rows.
func (e *EarlyFiles) offsets(r earlyRun) ([]int64, error) {
	buf := make([]byte, 8*r.n)
	if _, err := e.Offs.ReadAt(buf, 8*r.at); err != nil {
		return nil, fmt.Errorf("iceberg offsets file: %w", err)
	}
	out := make([]int64, r.n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	return out, nil
}

// wanted yields the rows the plan writes again, read back from its files and passed through conv:
// for each batch, the run its rows are of and their first index in the run.
func (p *earlyPlan) wanted(ctx context.Context, conv func(arrow.RecordBatch) (arrow.RecordBatch, error)) iter.Seq2[earlyRows, error] {
	return func(yield func(earlyRows, error) bool) {
		e := p.e
		fs, err := e.tbl.FS(ctx)
		if err != nil {
			yield(earlyRows{}, err)
			return
		}
		k := 0
		for _, sp := range p.rewrite {
			at := sp.at
			err := readParquet(ctx, fs, sp.f.FilePath(), func(b arrow.RecordBatch) error {
				a, end := at, at+b.NumRows()
				at = end
				for k < len(e.Runs) && e.Runs[k].at+e.Runs[k].n <= a {
					k++
				}
				for j := k; j < len(e.Runs) && e.Runs[j].at < end; j++ {
					r := e.Runs[j]
					lo, hi := max(a, r.at+p.drop[j]), min(end, r.at+r.n)
					if hi <= lo {
						continue
					}
					out, err := conv(b.NewSlice(lo-a, hi-a))
					if err != nil {
						return err
					}
					if !yield(earlyRows{b: out, run: r, from: lo - r.at}, nil) {
						return errStop
					}
				}
				return nil
			})
			if err == errStop {
				return
			}
			if err != nil {
				yield(earlyRows{}, fmt.Errorf("iceberg: read back %s: %w", sp.f.FilePath(), err))
				return
			}
		}
	}
}

// earlyRows is rows of run run read back, from its row from on.
type earlyRows struct {
	b    arrow.RecordBatch
	run  earlyRun
	from int64
}

// Batches yields the rows the plan writes again, for the table's data file writer.
func (p *earlyPlan) batches(ctx context.Context, asc *arrow.Schema, schemaID int) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		same := p.e.tbl.Schema().ID == schemaID
		conv := func(b arrow.RecordBatch) (arrow.RecordBatch, error) { return toTableBatch(b, asc, same) }
		for r, err := range p.wanted(ctx, conv) {
			if !yield(r.b, err) || err != nil {
				return
			}
		}
	}
}

// recs reads the wanted rows back as records (inserts), those of the files taken as they are
// too: for a table that must plan them as upserts after all (it gained identifier fields).
func (p *earlyPlan) recs(ctx context.Context) ([]Rec, error) {
	p.rewrite = p.rewrite[:0]
	var at int64
	for _, f := range p.e.files {
		p.rewrite = append(p.rewrite, earlySpan{f, at})
		at += f.Count()
	}
	p.asIs = nil
	var out []Rec
	same := func(b arrow.RecordBatch) (arrow.RecordBatch, error) { return b, nil }
	for r, err := range p.wanted(ctx, same) {
		if err != nil {
			return nil, err
		}
		offs, err := p.e.offsets(r.run)
		if err != nil {
			r.b.Release()
			return nil, err
		}
		for i, row := range icerow.RecordToRows(r.b) {
			out = append(out, Rec{Op: icerow.OpInsert, Row: row, TP: r.run.seg.tp, Offset: offs[r.from+int64(i)]})
		}
		r.b.Release()
	}
	return out, nil
}

// toTableBatch gives b (which it takes) the table's Arrow schema asc: the same columns when the
// file was written with the current schema, else converted row by row.
func toTableBatch(b arrow.RecordBatch, asc *arrow.Schema, sameSchema bool) (arrow.RecordBatch, error) {
	defer b.Release()
	if sameSchema && int(b.NumCols()) == asc.NumFields() {
		fits := true
		for i, f := range asc.Fields() {
			fits = fits && arrow.TypeEqual(f.Type, b.Column(i).DataType())
		}
		if fits {
			return array.NewRecordBatch(asc, b.Columns(), b.NumRows()), nil
		}
	}
	out, err := icerow.BuildRecord(asc, icerow.RecordToRows(b))
	if err != nil {
		return nil, &DataError{err}
	}
	return out, nil
}

// readParquet calls fn with each batch of a Parquet file of the table's file system.
func readParquet(ctx context.Context, fs icebergio.IO, path string, fn func(arrow.RecordBatch) error) error {
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return err
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: SpoolBatchRows}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// planEarly takes the segments whose rows are in data files already out of segs, and plans
// their writers' files against the head tbl.
func planEarly(ctx context.Context, tbl *table.Table, segs []*Segment, committed Offsets) ([]*Segment, []*earlyPlan, error) {
	var live map[*Segment]bool
	var order []*EarlyFiles
	spooled := segs[:0:0]
	for _, s := range segs {
		if s.early == nil {
			spooled = append(spooled, s)
			continue
		}
		if live == nil {
			live = map[*Segment]bool{}
		}
		if !slices.Contains(order, s.early) {
			order = append(order, s.early)
		}
		live[s] = true
	}
	plans := make([]*earlyPlan, 0, len(order))
	for _, e := range order {
		p, err := e.plan(ctx, tbl, live, committed)
		if err != nil {
			return nil, nil, err
		}
		plans = append(plans, p)
	}
	return spooled, plans, nil
}
