// Package clickhouse_test holds the end-to-end tests of the ClickHouse sink: connectd workers (through
// internal/testutil/workerproc) on a real broker writing over the native protocol to the chDB test shim in this
// process, SIGKILLed while they write.
package clickhouse_test

import (
	"os"
	"testing"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshimtest"
	"github.com/connectd/connectd/internal/testutil/customercdc"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kafkatest.Stop()
	chshimtest.Close()
	os.Exit(code)
}

var (
	engine = chshimtest.Engine
	query  = chdbtest.MustQuery

	customerCurrentDDL = customercdc.CurrentDDL
	envelopeSchema     = customercdc.Envelope
	customerKey        = customercdc.Key
	cdcStream          = customercdc.Stream
	expectedCurrent    = customercdc.ExpectedCurrent
)

// cdcEvent is one change of a customer row.
type cdcEvent = customercdc.Event
