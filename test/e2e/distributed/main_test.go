// Package distributed holds the end-to-end tests of distributed mode: `connectd distributed` processes
// (through internal/testutil/workerproc), alone and beside JVM Connect workers in one group, on a real broker,
// killed, restarted and scaled.
package distributed

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }
