// Package distributedapi holds the end-to-end tests of what a group of `connectd distributed` processes
// (through internal/testutil/distcluster) answers and stores: writes sent to any worker, target states and
// restarts, automatic restarts, config providers' references in the config topic, cluster-wide logger levels
// and plugin version pins stored by another worker.
package distributedapi

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }
