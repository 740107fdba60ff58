package icetable

import (
	"context"
	"fmt"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// CountRows counts the live rows of tbl's current snapshot that match filter (every delete file
// applied), reading the matching files without keeping their rows: what a delete by filter would
// remove.
func CountRows(ctx context.Context, tbl *table.Table, filter ice.BooleanExpression) (int64, error) {
	_, it, err := tbl.Scan(table.WithRowFilter(filter)).ToArrowRecords(ctx)
	if err != nil {
		return 0, fmt.Errorf("scanning %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	var n int64
	for rec, err := range it {
		if err != nil {
			return n, fmt.Errorf("reading %s: %w", strings.Join(tbl.Identifier(), "."), err)
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n, nil
}
