// Package cdcmodel is the model-based end-to-end test of the CDC sinks: random Debezium streams
// (internal/testutil/cdcstream) go through a real Kafka broker and the connectd binary (standalone worker,
// SIGKILLed and restarted) into the Iceberg and ClickHouse sinks; independent readers read the tables back
// and every stream is compared with the model. A failing stream is shrunk through the same path.
package cdcmodel

import (
	"os"
	"testing"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	closeShim()
	kafkatest.Stop()
	chdbtest.Close()
	os.Exit(code)
}
