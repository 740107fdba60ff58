package icetable_test

import "github.com/connectd/connectd/internal/testutil/icebergtest"

var (
	sqliteCatalog  = icebergtest.SQLiteCatalog
	customerSchema = icebergtest.CustomerSchema
	scanRows       = icebergtest.ScanRows
	duckRows       = icebergtest.DuckRows
)
