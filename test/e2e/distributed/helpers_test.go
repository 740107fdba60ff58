package distributed

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/distcluster"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// The group (internal/testutil/distcluster) and the REST and broker helpers, by the names the tests of this
// package use.
type (
	cluster    = distcluster.Cluster
	dworker    = distcluster.Worker
	connStatus = workerproc.Status
)

var (
	newCluster   = distcluster.New
	owners       = distcluster.Owners
	producer     = distcluster.Producer
	produceBatch = distcluster.ProduceBatch
	fileValues   = distcluster.FileValues
	httpDo       = workerproc.Request
	freePort     = workerproc.FreePort
)

func status(t testing.TB, w *dworker, name string) (connStatus, bool) {
	return workerproc.ConnectorStatus(w.URL, name)
}

func createTopic(t testing.TB, addr, topic string, parts int32) {
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
}
