package iceberg

import "github.com/connectd/connectd/internal/testutil/icebergtest"

var (
	sqliteCatalog  = icebergtest.SQLiteCatalog
	customerSchema = icebergtest.CustomerSchema
	scanRows       = icebergtest.ScanRows
	duckRows       = icebergtest.DuckRows
	cdcStream      = icebergtest.CDCStream
	wantRows       = icebergtest.WantRows
)

// cdcEvent is one change of a customer row.
type cdcEvent = icebergtest.CDCEvent
