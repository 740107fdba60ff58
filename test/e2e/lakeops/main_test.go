// Package lakeops holds the end-to-end tests of the lake applications (lakeops/): reconcile, rebuild, erase and
// the restore drill, as commands and as a worker's schedule, on a Kafka -> Iceberg + ClickHouse pipeline of
// connectd workers started through internal/testutil/workerproc.
package lakeops

import (
	"os"
	"testing"

	"github.com/connectd/connectd/internal/testutil/lakepipeline"
)

func TestMain(m *testing.M) {
	code := m.Run()
	lakepipeline.Close()
	os.Exit(code)
}
