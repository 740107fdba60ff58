package icetable

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// SpoolBatchRows is how many rows a segment builds in memory before it writes them to its file:
// the in-memory part of an append table's buffer, per task and partition.
const SpoolBatchRows = 8192

// spoolIOBuffer buffers a segment's file: the IPC writer and reader move a batch in a few
// pieces per column, and the large ones bypass the buffer, so it only needs to gather the small
// message headers. One is open per task, table and partition.
const spoolIOBuffer = 64 << 10

// offsetColumn is the segment's own column after the table's columns: each row's Kafka offset
// (badRow for a row whose value did not convert; it is never written to the table).
const offsetColumn = "_connectd_kafka_offset"

const badRow = -1

// Segment holds append rows of one topic-partition for one table, converted at Put into Arrow
// builders of the table's schema and written in batches to a local Arrow IPC file, so that a
// commit interval's records cost disk, not memory. The commit round reads the file back batch
// by batch into the table's data file writer (Writer.Prepare). Rows are in offset order, so the
// Rows below a table's committed offset are a prefix of the segment.
type Segment struct {
	tp        TP
	SchemaID  int           // table schema the rows were built for
	schema    *arrow.Schema // the table's Arrow schema (field ids), without offsetColumn
	Rows      int           // rows written to the file and in the builder, bad ones included
	batchRows int           // rows built before they are sent on
	bad       int

	path    string
	f       scratchFile // open from creation to remove: on Unix the file has no name, so a killed process leaves nothing
	Size    int64       // bytes written, once sealed
	bw      *bufio.Writer
	w       *ipc.Writer
	b       *array.RecordBuilder
	Fields  []arrow.Field   // the table's columns (Schema.Fields copies: once per segment, not per row)
	cols    []array.Builder // b's builders of fields
	dataLen []int           // per column, the bytes of strings in the last batch written
	off     *array.Int64Builder
	sealed  bool
	err     error // a failed write: the round that plans the segment fails with it

	// early, when set, takes the segment's batches into data files as they fill (early.go),
	// instead of its spool file
	early *EarlyFiles
}

// Spoolable reports whether rows of this Arrow schema can go through a segment: top-level
// primitive columns only, so that a row whose value fails to convert can be padded with nulls
// without leaving a nested builder half-appended.
func Spoolable(sc *arrow.Schema) bool {
	for _, f := range sc.Fields() {
		switch f.Type.(type) {
		case *arrow.StructType, *arrow.ListType, *arrow.LargeListType, *arrow.MapType, *arrow.FixedSizeListType:
			return false
		}
	}
	return true
}

func NewSegment(files *ScratchFiles, dir string, tp TP, schemaID int, sc *arrow.Schema) (*Segment, error) {
	f, err := files.Create(dir, "connectd-iceberg-*.arrows")
	if err != nil {
		return nil, err
	}
	s, full := newSegmentBuilder(tp, schemaID, sc, SpoolBatchRows)
	s.path, s.f = f.Name(), f
	s.bw = bufio.NewWriterSize(f, spoolIOBuffer)
	s.w = ipc.NewWriter(s.bw, ipc.WithSchema(full))
	return s, nil
}

// NewEarlySegment returns a segment whose batches go to the data files of e.
func NewEarlySegment(e *EarlyFiles, tp TP, schemaID int, sc *arrow.Schema) *Segment {
	s, _ := newSegmentBuilder(tp, schemaID, sc, writeBatchRows)
	s.early = e
	e.segs++
	return s
}

// newSegmentBuilder returns a segment with its builders, and their schema (the table's columns
// and offsetColumn).
func newSegmentBuilder(tp TP, schemaID int, sc *arrow.Schema, batchRows int) (*Segment, *arrow.Schema) {
	fields := append(sc.Fields(), arrow.Field{Name: offsetColumn, Type: arrow.PrimitiveTypes.Int64})
	full := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(batchMemory, full)
	b.Reserve(batchRows)
	cols := make([]array.Builder, len(fields)-1)
	for i := range cols {
		cols[i] = b.Field(i)
	}
	return &Segment{
		tp: tp, SchemaID: schemaID, schema: sc, batchRows: batchRows, b: b, Fields: fields[:len(cols)], cols: cols,
		off: b.Field(len(fields) - 1).(*array.Int64Builder),
	}, full
}

// Add appends one row. A value that does not fit its column is a data error: the row is kept
// as a bad row (nulls, never written to the table) so the builders stay aligned.
func (s *Segment) Add(row icerow.Row, offset int64) error {
	var rowErr error
	for i := range s.Fields {
		f := &s.Fields[i]
		if rowErr != nil {
			s.cols[i].AppendNull()
			continue
		}
		if err := icerow.AppendValue(s.cols[i], f.Type, row[f.Name]); err != nil {
			rowErr = &DataError{fmt.Errorf("column %q: %w", f.Name, err)}
			s.cols[i].AppendNull()
		}
	}
	s.Rows++
	if rowErr != nil {
		s.bad++
		s.off.Append(badRow)
	} else {
		s.off.Append(offset)
	}
	if s.off.Len() >= s.batchRows {
		if err := s.flush(true); err != nil {
			return err
		}
	}
	return rowErr
}

// AppendJSON appends the (valid) JSON object b, of the listed members (nil: not listed), as one row
// when it is of shape js, else appends nothing and reports false.
func (s *Segment) AppendJSON(js *icerow.JSONShape, b []byte, members []jsonvalue.Member, offset int64) (bool, error) {
	if !js.Scan(b, members) {
		return false, nil
	}
	return true, s.AppendScanned(js, b, offset)
}

// AppendScanned appends the JSON object b, which shape js just scanned (icerow.Router gives such), as
// one row; the error is a failed write of the spool file.
func (s *Segment) AppendScanned(js *icerow.JSONShape, b []byte, offset int64) error {
	js.AppendScanned(s.cols, b)
	s.Rows++
	s.off.Append(offset)
	if s.off.Len() >= s.batchRows {
		return s.flush(true)
	}
	return nil
}

// Flush writes the built rows as one batch; more says whether rows follow.
func (s *Segment) flush(more bool) error {
	if s.off.Len() == 0 {
		return nil
	}
	if more {
		if s.dataLen == nil {
			s.dataLen = make([]int, len(s.cols))
		}
		for i, c := range s.cols {
			if bb := binaryBuilder(c); bb != nil {
				s.dataLen[i] = bb.DataLen()
			}
		}
	}
	rec := s.b.NewRecordBatch()
	var err error
	if s.early != nil {
		err = s.sendEarly(rec)
	} else if err = s.w.Write(rec); err != nil {
		s.err = fmt.Errorf("iceberg spool %s: %w", s.path, err)
		err = s.err
	}
	rec.Release() // before reserve: a spooled batch's buffers serve the next one (batchMemory)
	s.reserve(more)
	return err
}

// reserve sizes the builders for the next batch when more rows follow.
func (s *Segment) reserve(more bool) {
	if more {
		// The next batch is much like this one: size its buffers now. Grown by doubling from empty,
		// each string column is allocated and copied about twice over per batch.
		s.b.Reserve(s.batchRows)
		for i, c := range s.cols {
			if bb := binaryBuilder(c); bb != nil {
				bb.ReserveData(s.dataLen[i] + s.dataLen[i]/8)
			}
		}
	}
}

// sendEarly sends the good rows of a built batch to the segment's data file writer, a run of
// Rows between bad ones at a time.
func (s *Segment) sendEarly(rec arrow.RecordBatch) error {
	offs := rec.Column(len(s.cols)).(*array.Int64).Int64Values()
	cols := rec.Columns()[:len(s.cols)]
	for i, j := range goodRuns(offs, 0) {
		if err := s.early.add(s, sliceBatch(s.schema, cols, i, j), offs[i:j]); err != nil {
			s.err = err
			return err
		}
	}
	return nil
}

// goodRuns yields the runs [i, j) of rows from start on whose offsets are not badRow.
func goodRuns(offs []int64, start int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := start; i < len(offs); {
			if offs[i] == badRow {
				i++
				continue
			}
			j := i
			for j < len(offs) && offs[j] != badRow {
				j++
			}
			if !yield(i, j) {
				return
			}
			i = j
		}
	}
}

// binaryBuilder is the variable-length part of a string or binary column's builder (nil for others).
func binaryBuilder(b array.Builder) *array.BinaryBuilder {
	switch x := b.(type) {
	case *array.StringBuilder:
		return x.BinaryBuilder
	case *array.LargeStringBuilder:
		return x.BinaryBuilder
	case *array.BinaryBuilder:
		return x
	}
	return nil
}

// Seal writes what is left and closes the file; the segment is read-only from then on.
func (s *Segment) Seal() error {
	if s.sealed {
		return nil
	}
	s.sealed = true
	defer s.b.Release()
	err := s.flush(false)
	if s.early != nil {
		return err
	}
	if cerr := s.w.Close(); err == nil {
		err = cerr
	}
	if ferr := s.bw.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		s.Size, err = s.f.Seek(0, io.SeekCurrent)
	}
	if err != nil {
		s.err = fmt.Errorf("iceberg spool %s: %w", s.path, err)
		return s.err
	}
	return nil
}

// Remove gives the segment's file back to the task's files (after its rows are committed, or when
// they are dropped).
func (s *Segment) Remove() {
	if !s.sealed {
		s.sealed = true
		if s.w != nil {
			s.w.Close()
		}
		s.b.Release()
	}
	if s.early != nil {
		s.early.segmentGone()
		return
	}
	s.f.release(s.err != nil)
}

// Read calls fn with each batch of the sealed segment and its offsets column.
func (s *Segment) read(fn func(rec arrow.RecordBatch, offs []int64) error) error {
	if s.err != nil {
		return s.err
	}
	rd, err := ipc.NewReader(bufio.NewReaderSize(io.NewSectionReader(s.f, 0, s.Size), spoolIOBuffer))
	if err != nil {
		return fmt.Errorf("iceberg spool %s: %w", s.path, err)
	}
	defer rd.Release()
	ncols := len(s.schema.Fields())
	for rd.Next() {
		rec := rd.RecordBatch()
		if err := fn(rec, rec.Column(ncols).(*array.Int64).Int64Values()); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("iceberg spool %s: %w", s.path, err)
	}
	return nil
}

// errStop ends a read early without an error.
var errStop = errors.New("stop")

// Batches reads the sealed segment back as record batches of the table's current Arrow schema
// asc (schema schemaID), without the rows below from (already in the table) and without bad
// rows. Rows built for an older schema are converted to the current one. n counts the rows
// yielded and skipped the rows below from.
func (s *Segment) Batches(asc *arrow.Schema, schemaID int, from int64, n, skipped *int) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		ncols := len(s.schema.Fields())
		err := s.read(func(rec arrow.RecordBatch, offs []int64) error {
			cols := rec.Columns()[:ncols]
			// offsets rise within a segment (bad rows aside): the committed rows are a prefix
			start := 0
			for ; start < len(offs) && (offs[start] == badRow || offs[start] < from); start++ {
				if offs[start] != badRow {
					*skipped++
				}
			}
			for i, j := range goodRuns(offs, start) {
				var out arrow.RecordBatch
				if s.SchemaID == schemaID {
					out = sliceBatch(asc, cols, i, j)
				} else {
					old := sliceBatch(s.schema, cols, i, j)
					rows := icerow.RecordToRows(old)
					old.Release()
					var err error
					if out, err = icerow.BuildRecord(asc, rows); err != nil {
						return &DataError{err}
					}
				}
				*n += j - i
				if !yield(out, nil) {
					return errStop
				}
			}
			return nil
		})
		if err != nil && err != errStop {
			yield(nil, err)
		}
	}
}

// recs reads the sealed segment back as records (inserts) at or above offset from: for a table
// that must plan its rows as upserts after all (it gained identifier fields meanwhile).
func (s *Segment) recs(from int64, skipped *int) ([]Rec, error) {
	var out []Rec
	ncols := len(s.schema.Fields())
	err := s.read(func(rec arrow.RecordBatch, offs []int64) error {
		data := sliceBatch(s.schema, rec.Columns()[:ncols], 0, len(offs))
		defer data.Release()
		for i, row := range icerow.RecordToRows(data) {
			switch {
			case offs[i] == badRow:
			case offs[i] < from:
				*skipped++
			default:
				out = append(out, Rec{Op: icerow.OpInsert, Row: row, TP: s.tp, Offset: offs[i]})
			}
		}
		return nil
	})
	return out, err
}

func sliceBatch(sc *arrow.Schema, cols []arrow.Array, i, j int) arrow.RecordBatch {
	out := make([]arrow.Array, len(cols))
	for c, a := range cols {
		out[c] = array.NewSlice(a, int64(i), int64(j))
	}
	rec := array.NewRecordBatch(sc, out, int64(j-i))
	for _, a := range out {
		a.Release()
	}
	return rec
}

// spooledBatches chains the batches of sealed segments for the table's data file writer, each
// without the rows below the table's committed offset of its partition.
func spooledBatches(asc *arrow.Schema, schemaID int, segs []*Segment, committed Offsets, n, skipped *int) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, s := range segs {
			for b, err := range s.Batches(asc, schemaID, committedFrom(committed, s.tp), n, skipped) {
				if !yield(b, err) || err != nil {
					return
				}
			}
		}
	}
}

// concatBatches yields the batches of a, then those of b.
func concatBatches(a, b iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for r, err := range a {
			if !yield(r, err) || err != nil {
				return
			}
		}
		for r, err := range b {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// committedFrom is the first offset of tp not in the table (0 when it holds none).
func committedFrom(committed Offsets, tp TP) int64 {
	if off, ok := committed[tp]; ok {
		return off
	}
	return 0
}

// spooledNewerSchema reports whether spooled rows among recs were built for another schema
// than the cached table's (a task evolved it at Put).
func spooledNewerSchema(tbl *table.Table, recs []Rec) bool {
	if tbl == nil {
		return false
	}
	id := tbl.Schema().ID
	for _, r := range recs {
		if r.Seg != nil && r.Seg.SchemaID != id {
			return true
		}
	}
	return false
}
