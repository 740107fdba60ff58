// Package iceberg_test holds the end-to-end tests of the Iceberg sink: connectd workers (standalone and
// distributed, through internal/testutil/workerproc) on a real broker, killed and restarted, with the tables
// read back by an independent reader (DuckDB).
package iceberg_test

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

var (
	duckRows  = icebergtest.DuckRows
	cdcStream = icebergtest.CDCStream
	wantRows  = icebergtest.WantRows
)

// cdcEvent is one change of a customer row.
type cdcEvent = icebergtest.CDCEvent
