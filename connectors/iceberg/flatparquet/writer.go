package flatparquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Codec is the compression of a file's pages, by its Parquet id.
type Codec int

const (
	Uncompressed Codec = 0
	Zstd         Codec = 6
)

// Options shape a file. Zero values take iceberg-go's defaults of the matching table properties.
type Options struct {
	RowGroupRows  int   // rows of a row group (write.parquet.row-group-limit)
	RowGroupBytes int64 // encoded bytes of a row group, checked between batches (write.parquet.row-group-size-bytes)
	PageBytes     int   // encoded value bytes of a data page (write.parquet.page-size-bytes)
	PageRows      int   // rows of a data page (write.parquet.page-row-limit)
	DictBytes     int   // bytes of a chunk's dictionary (write.parquet.dict-size-bytes)
	Codec         Codec
	// Compress compresses src into dst[:0] with Codec (required unless Uncompressed).
	Compress  func(dst, src []byte) []byte
	CreatedBy string
}

// The defaults of Options, iceberg-go's.
const (
	defaultRowGroupRows  = 1 << 20
	defaultRowGroupBytes = 128 << 20
	defaultPageBytes     = 1 << 20
	defaultPageRows      = 20000
	defaultDictBytes     = 2 << 20
)

// batchRows bounds the rows encoded between checks of a page's size.
const batchRows = 1024

func (o *Options) validate() error {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.RowGroupRows, defaultRowGroupRows)
	set(&o.PageBytes, defaultPageBytes)
	set(&o.PageRows, defaultPageRows)
	set(&o.DictBytes, defaultDictBytes)
	if o.RowGroupBytes <= 0 {
		o.RowGroupBytes = defaultRowGroupBytes
	}
	switch o.Codec {
	case Uncompressed:
	case Zstd:
		if o.Compress == nil {
			return errors.New("flatparquet: the zstd codec needs a Compress function")
		}
	default:
		return fmt.Errorf("flatparquet: codec %d is not supported", o.Codec)
	}
	if o.CreatedBy == "" {
		o.CreatedBy = "connectd"
	}
	return nil
}

func (o *Options) compress(dst, src []byte) []byte {
	if o.Codec == Uncompressed {
		return append(dst[:0], src...)
	}
	return o.Compress(dst[:0], src)
}

// Writer writes one Parquet file.
type Writer struct {
	w      io.Writer
	opts   Options
	cols   []*column
	rgRows int
	rgs    []rowGroupMeta
	at     int64 // bytes written
	size   int64 // the most BytesWritten has said
	buf    bytes.Buffer
	err    error
}

var magic = []byte("PAR1")

// NewWriter starts a file of columns cols on w.
func NewWriter(w io.Writer, cols []Column, opts Options) (*Writer, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, errors.New("flatparquet: a file needs a column")
	}
	fw := &Writer{w: w, opts: opts}
	for _, c := range cols {
		col, err := newColumn(c, &fw.opts)
		if err != nil {
			return nil, err
		}
		fw.cols = append(fw.cols, col)
	}
	if err := fw.write(magic); err != nil {
		return nil, err
	}
	return fw, nil
}

func (w *Writer) write(b []byte) error {
	if w.err != nil {
		return w.err
	}
	n, err := w.w.Write(b)
	w.at += int64(n)
	if err != nil {
		w.err = fmt.Errorf("flatparquet: write: %w", err)
	}
	return w.err
}

// Write adds the rows of b, whose columns are the file's in order. It does not release b.
func (w *Writer) Write(b arrow.RecordBatch) error {
	if w.err != nil {
		return w.err
	}
	if int(b.NumCols()) != len(w.cols) {
		return fmt.Errorf("flatparquet: a batch of %d columns for a file of %d", b.NumCols(), len(w.cols))
	}
	for i, c := range w.cols {
		if dt := b.Column(i).DataType(); !c.checkArrow(dt) {
			return fmt.Errorf("flatparquet: column %q of type %v holds Arrow %v", c.Name, c.Type, dt)
		}
	}
	n := int(b.NumRows())
	for from := 0; from < n; {
		take := min(n-from, w.opts.RowGroupRows-w.rgRows, batchRows)
		for i, c := range w.cols {
			if err := c.add(b.Column(i), from, from+take); err != nil {
				w.err = err
				return err
			}
		}
		from += take
		w.rgRows += take
		if w.rgRows >= w.opts.RowGroupRows || w.rowGroupBytes() >= w.opts.RowGroupBytes {
			if err := w.flushRowGroup(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *Writer) rowGroupBytes() int64 {
	var n int64
	for _, c := range w.cols {
		n += int64(c.bufferedBytes())
	}
	return n
}

// BytesWritten is the size of the file so far, the row group being built counted as encoded so
// far. It never decreases, though a page counted before compression shrinks when compressed.
func (w *Writer) BytesWritten() int64 {
	w.size = max(w.size, w.at+w.rowGroupBytes())
	return w.size
}

func (w *Writer) flushRowGroup() error {
	if w.rgRows == 0 {
		return nil
	}
	rg := rowGroupMeta{rows: int64(w.rgRows), offset: w.at}
	w.buf.Reset()
	for _, c := range w.cols {
		m := c.finishChunk(&w.buf, w.at+int64(w.buf.Len()))
		rg.usize += m.usize
		rg.csize += m.csize
		rg.chunks = append(rg.chunks, m)
	}
	w.rgs = append(w.rgs, rg)
	w.rgRows = 0
	return w.write(w.buf.Bytes())
}

// Close writes the last row group and the footer, and returns the footer as arrow-go reads it
// and the file's size. It does not close the underlying writer.
func (w *Writer) Close() (*metadata.FileMetaData, int64, error) {
	if err := w.flushRowGroup(); err != nil {
		return nil, 0, err
	}
	footer := fileMetaData(w.cols, w.rgs, w.opts.Codec, w.opts.CreatedBy)
	md, err := metadata.NewFileMetaData(footer, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("flatparquet: the footer does not read back: %w", err)
	}
	tail := binary.LittleEndian.AppendUint32(footer, uint32(len(footer)))
	if err := w.write(append(tail, magic...)); err != nil {
		return nil, 0, err
	}
	return md, w.at, nil
}
