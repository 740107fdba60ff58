// Package parity holds the end-to-end tests that hold a connectd worker to the JVM's answers: REST bodies and
// sessions recorded from JVM Connect, and the SMTs' outputs against the JVM's, on connectd processes started
// through internal/testutil/workerproc.
package parity

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }
