package icetable

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/compress"
	ice "github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connectors/iceberg/flatparquet"
)

// fileOptions are how a call of writeDataFiles writes its files.
type fileOptions struct {
	queue          int   // batches that wait for a file's encoder
	targetFileSize int64 // 0: the table's write.target-file-size-bytes
	rowGroupRows   int   // 0: the table's write.parquet.row-group-limit, else rowGroupRows
}

// icebergOptions are the options of iceberg-go's writer.
func (o fileOptions) icebergOptions(tbl *table.Table) []table.WriteRecordOption {
	opts := append(rowGroupLimit(tbl), table.WithRecordBatchBufferSize(o.queue))
	if o.rowGroupRows > 0 {
		opts = append(opts, table.WithParquetRowGroupLimit(o.rowGroupRows))
	}
	if o.targetFileSize > 0 {
		opts = append(opts, table.WithTargetFileSize(o.targetFileSize))
	}
	return opts
}

// flatLayout is how the flat writer writes the data files of a table: its columns, as named in the
// files, and the encoding options its properties give.
type flatLayout struct {
	schema *ice.Schema // the table's schema with the column names of its files
	cols   []flatparquet.Column
	opts   flatparquet.Options
	target int64
}

// flatFiles returns the layout of tbl's data files for batches of schema asc when the flat writer
// writes them as iceberg-go's writer would: an unpartitioned, unsorted table of top-level
// primitive columns, written with the table properties that both writers honour. ok is false
// for any other table, whose files iceberg-go writes.
func flatFiles(tbl *table.Table, asc *arrow.Schema, o fileOptions) (l flatLayout, ok bool) {
	if !tbl.Spec().IsUnpartitioned() || !tbl.SortOrder().IsUnsorted() {
		return l, false
	}
	props := tbl.Properties()
	for k, v := range props {
		switch {
		case k == table.WriteFormatDefaultKey && !strings.EqualFold(v, "parquet"),
			k == table.ParquetPageVersionKey && v != "2",
			k == table.ParquetBloomFilterMaxBytesKey,
			strings.HasPrefix(k, "write.parquet.bloom-filter-enabled.column."),
			strings.HasPrefix(k, "encryption."):
			return l, false
		}
	}
	for range tbl.Metadata().EncryptionKeys() {
		return l, false
	}
	fileSchema, err := ice.SanitizeColumnNames(tbl.Schema())
	if err != nil || len(fileSchema.Fields()) != asc.NumFields() {
		return l, false
	}
	dictDefault := true
	if v, set := props[dictEnabledKey]; set {
		dictDefault = strings.EqualFold(v, "true")
	}
	for i, f := range fileSchema.Fields() {
		pt, prim := f.Type.(ice.PrimitiveType)
		if !prim || !flatparquet.Supported(pt) || asc.Field(i).Name != tbl.Schema().Fields()[i].Name {
			return l, false
		}
		col := flatparquet.Column{Name: f.Name, FieldID: f.ID, Type: pt, Required: f.Required, Dictionary: dictDefault}
		if !col.Accepts(asc.Field(i).Type) {
			return l, false
		}
		for _, name := range []string{f.Name, asc.Field(i).Name} {
			if v, set := props[dictColumnEnabledKey+name]; set {
				col.Dictionary = strings.EqualFold(v, "true")
			}
		}
		l.cols = append(l.cols, col)
	}
	l.schema = fileSchema

	ints := []struct {
		key string
		dst *int
		def int
	}{
		{table.ParquetRowGroupLimitKey, &l.opts.RowGroupRows, rowGroupRows},
		{table.ParquetPageSizeBytesKey, &l.opts.PageBytes, table.ParquetPageSizeBytesDefault},
		{table.ParquetPageRowLimitKey, &l.opts.PageRows, table.ParquetPageRowLimitDefault},
		{table.ParquetDictSizeBytesKey, &l.opts.DictBytes, table.ParquetDictSizeBytesDefault},
	}
	for _, p := range ints {
		*p.dst = p.def
		if v, set := props[p.key]; set {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return l, false
			}
			*p.dst = n
		}
	}
	l.opts.RowGroupBytes = table.ParquetRowGroupSizeBytesDefault
	if v, set := props[table.ParquetRowGroupSizeBytesKey]; set {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return l, false
		}
		l.opts.RowGroupBytes = n
	}
	if o.rowGroupRows > 0 {
		l.opts.RowGroupRows = o.rowGroupRows
	}
	l.target = o.targetFileSize
	if l.target <= 0 {
		l.target = table.WriteTargetFileSizeBytesDefault
		if v, set := props[table.WriteTargetFileSizeBytesKey]; set {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return l, false
			}
			l.target = n
		}
	}

	// a level iceberg-go refuses (zstd's are -5 to 22) is refused there
	level := table.ParquetCompressionLevelDefault
	if v, set := props[table.ParquetCompressionLevelKey]; set {
		n, err := strconv.Atoi(v)
		if err != nil || n < -5 || n > 22 {
			return l, false
		}
		level = n
	}
	switch strings.ToLower(props.Get(table.ParquetCompressionKey, table.ParquetCompressionDefault)) {
	case "zstd":
		codec, err := compress.GetCodec(compress.Codecs.Zstd)
		if err != nil {
			return l, false
		}
		if level == table.ParquetCompressionLevelDefault {
			level = compress.DefaultCompressionLevel
		}
		l.opts.Codec = flatparquet.Zstd
		l.opts.Compress = func(dst, src []byte) []byte { return codec.EncodeLevel(dst, src, level) }
	case "uncompressed":
		l.opts.Codec = flatparquet.Uncompressed
	default:
		return l, false
	}
	l.opts.CreatedBy = "connectd"
	return l, true
}

// writeFlatFiles writes the batches of src (releasing each) to data files of tbl laid out as l,
// rolling to a new file at l.target bytes. An encoder goroutine writes the files while src
// builds the next batches, queue of them at most waiting.
func writeFlatFiles(ctx context.Context, tbl *table.Table, l flatLayout, queue int, src iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[ice.DataFile, error] {
	return func(yield func(ice.DataFile, error) bool) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		wfs, ok := fsys.(icebergio.WriteFileIO)
		if !ok {
			yield(nil, fmt.Errorf("the file system of table %s cannot write files", strings.Join(tbl.Identifier(), ".")))
			return
		}
		locs, err := table.LoadLocationProvider(tbl.Location(), tbl.Properties())
		if err != nil {
			yield(nil, err)
			return
		}
		enc := &flatEncoder{tbl: tbl, l: l, fs: wfs, locs: locs, writeID: uuid.New(),
			in: make(chan arrow.RecordBatch, max(queue, 1)), failed: make(chan struct{}), done: make(chan struct{})}
		go enc.run()

		var srcErr error
	feed:
		for b, err := range src {
			if err != nil {
				srcErr = err
				break
			}
			select {
			case enc.in <- b:
			case <-enc.failed:
				b.Release()
				break feed
			case <-ctx.Done():
				b.Release()
				srcErr = ctx.Err()
				break feed
			}
		}
		close(enc.in)
		<-enc.done
		if srcErr == nil && enc.err == nil {
			for _, df := range enc.files {
				if !yield(df, nil) {
					return
				}
			}
			return
		}
		enc.removeAll()
		if srcErr != nil {
			yield(nil, srcErr)
		} else {
			yield(nil, enc.err)
		}
	}
}

// flatEncoder writes the data files of one call of writeFlatFiles.
type flatEncoder struct {
	tbl     *table.Table
	l       flatLayout
	fs      icebergio.WriteFileIO
	locs    table.LocationProvider
	writeID uuid.UUID
	in      chan arrow.RecordBatch
	failed  chan struct{} // closed when err is set
	done    chan struct{}

	files   []ice.DataFile
	written []string // paths of the files written, finished or not
	err     error
}

func (e *flatEncoder) run() {
	defer close(e.done)
	var (
		f    icebergio.FileWriter
		w    *flatparquet.Writer
		path string
	)
	fail := func(err error) {
		e.err = err
		close(e.failed)
		if f != nil {
			f.Close()
		}
		for b := range e.in {
			b.Release()
		}
	}
	finish := func() error {
		md, size, err := w.Close()
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close data file %s: %w", path, cerr)
		}
		f, w = nil, nil
		if err != nil {
			return err
		}
		df, err := table.DataFileFromMetadata(table.DataFileArgs{
			Schema: e.l.schema, Spec: e.tbl.Spec(), Format: ice.ParquetFile, Metadata: md, FilePath: path,
			FileSize: size, Content: ice.EntryContentData, Properties: e.tbl.Properties(),
			FormatVersion: e.tbl.Metadata().Version(),
		})
		if err != nil {
			return fmt.Errorf("data file %s: %w", path, err)
		}
		e.files = append(e.files, df)
		return nil
	}
	for b := range e.in {
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if w == nil {
			// named as iceberg-go's writer names its files
			path = e.locs.NewDataLocation(fmt.Sprintf("%05d-%d-%s-%05d.parquet", 0, 0, e.writeID, len(e.written)+1))
			e.written = append(e.written, path)
			var err error
			if f, err = e.fs.Create(path); err != nil {
				b.Release()
				fail(fmt.Errorf("create data file %s: %w", path, err))
				return
			}
			if w, err = flatparquet.NewWriter(f, e.l.cols, e.l.opts); err != nil {
				b.Release()
				fail(err)
				return
			}
		}
		err := w.Write(b)
		b.Release()
		if err == nil && w.BytesWritten() >= e.l.target {
			err = finish()
		}
		if err != nil {
			fail(err)
			return
		}
	}
	if w != nil {
		if err := finish(); err != nil {
			fail(err)
		}
	}
}

// removeAll removes the files of a call that failed: no snapshot refers to them.
func (e *flatEncoder) removeAll() {
	for _, p := range e.written {
		_ = e.fs.Remove(p)
	}
}
