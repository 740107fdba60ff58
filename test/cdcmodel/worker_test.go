package cdcmodel

import (
	"os"
	"testing"

	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// startWorker runs one `connectd standalone` process; $CDC_WORKER_LOG logs its output's tail also when the
// test passes.
func startWorker(t *testing.T, args ...string) *workerproc.Proc {
	p := workerproc.Start(t, args...)
	t.Cleanup(func() {
		if !t.Failed() && os.Getenv("CDC_WORKER_LOG") != "" {
			t.Logf("worker log (tail):\n%s", p.Tail(6000))
		}
	})
	return p
}
