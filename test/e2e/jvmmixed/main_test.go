// Package jvmmixed holds the end-to-end tests of JVM Connect workers and `connectd distributed` processes
// (through internal/testutil/distcluster) in one group on a real broker: a Go group taking over from a JVM
// worker, leadership on either side, the eager protocol, SIGKILLs of both kinds, and the Iceberg sink connector
// with its tasks and coordinators on both kinds (the Apache Iceberg sink on the JVM side).
package jvmmixed

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }
