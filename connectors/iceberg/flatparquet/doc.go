// Package flatparquet writes the Parquet data files of flat tables, whose columns are all
// top-level primitives, straight from Arrow record batches.
//
// It exists for the cost of the sink's steady state: arrow-go's column writers hash and box every
// value for their dictionaries, update statistics value by value and regrow their page buffers,
// which made them half of the CPU an append spends per record. Here a column chunk is encoded in
// one pass per batch: fixed-width values are copied from the Arrow buffers as they are, a
// dictionary is kept per column chunk and its statistics per dictionary entry, and page buffers
// are reused for the life of the writer.
//
// The files are what arrow-go's writer makes of the same batches with iceberg-go's default
// properties: DATA_PAGE_V2 pages, RLE definition levels, RLE_DICTIONARY or PLAIN values, the same
// schema annotations and column-chunk statistics, so the table's metrics are derived from the
// footer as before (iceberg-go's table.DataFileFromMetadata).
package flatparquet
