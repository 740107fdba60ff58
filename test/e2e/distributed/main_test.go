// Package distributed holds the end-to-end tests of a group of `connectd distributed` processes (through
// internal/testutil/distcluster) on a real broker: rebalances, SIGKILLs of members and of the leader, a restart of
// every worker, and scale (many connectors, workers joining and leaving); and the benchmarks of those.
package distributed

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }
