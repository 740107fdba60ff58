package jvmmixed

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/distcluster"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// The connectd side of a group (internal/testutil/distcluster) and the REST and broker helpers, by the names the
// tests of this package use.
type (
	cluster    = distcluster.Cluster
	dworker    = distcluster.Worker
	taskStatus = workerproc.TaskState
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

func repoRoot(testing.TB) string { return workerproc.RepoRoot() }

func status(t testing.TB, w *dworker, name string) (workerproc.Status, bool) {
	return workerproc.ConnectorStatus(w.URL, name)
}

func createTopic(t testing.TB, addr, topic string, parts int32) {
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
}
