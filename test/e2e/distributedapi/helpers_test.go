package distributedapi

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/distcluster"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// The group (internal/testutil/distcluster) and the REST and broker helpers, by the names the tests of this
// package use.
type dworker = distcluster.Worker

var (
	newCluster = distcluster.New
	fileValues = distcluster.FileValues
	httpDo     = workerproc.Request
	freePort   = workerproc.FreePort
)

// kafkaBootstrap is the shared test broker (TestMain is main_test.go's kafkatest.Main).
func kafkaBootstrap(t testing.TB) string { return kafkatest.Bootstrap(t) }

func status(t testing.TB, w *dworker, name string) (workerproc.Status, bool) {
	return workerproc.ConnectorStatus(w.URL, name)
}

func createTopic(t testing.TB, addr, topic string, parts int32) {
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
}
