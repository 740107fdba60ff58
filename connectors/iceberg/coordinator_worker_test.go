package iceberg

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/metrics"
)

// workerCtx is a task context on a worker of its own: the shared values are that worker's.
type workerCtx struct {
	*fakeCtx
	shared *connect.SharedValues
}

func (w *workerCtx) SharedValues() *connect.SharedValues { return w.shared }

// TestCoordinatorPerWorker: the tasks of a connector on one worker share its coordinator, a task on another
// worker of the process has one of its own (as in another process); /metrics reports the connector once while
// both run, and a worker's coordinators and their metrics go with its last task.
func TestCoordinatorPerWorker(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{KeyTables: "db.w"})
	var w1, w2 connect.SharedValues
	start := func(w *connect.SharedValues) *Task {
		task := &Task{}
		task.Initialize(&workerCtx{fakeCtx: &fakeCtx{props: props}, shared: w})
		require.NoError(t, task.Start(props))
		return task
	}
	a1, a2, b := start(&w1), start(&w1), start(&w2)
	t.Cleanup(func() { _ = b.Stop() })
	require.Same(t, a1.coord, a2.coord)
	require.NotSame(t, a1.coord, b.coord)
	require.NotSame(t, a1.coord.set, b.coord.set)

	buffered := func() []float64 {
		fams, err := metrics.Registry.Gather()
		require.NoError(t, err, "a scrape with two workers' collectors")
		var out []float64
		for _, f := range fams {
			if f.GetName() != "connectd_iceberg_buffered_records" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "connector" && l.GetValue() == props["name"] {
						out = append(out, value(m))
					}
				}
			}
		}
		return out
	}
	require.NoError(t, a1.Put(context.Background(), benchRecords(3, 1<<62, 0)))
	require.Equal(t, []float64{3}, buffered(), "the first worker's series, once")

	set := a1.coord.set
	require.NoError(t, a1.Stop())
	require.NoError(t, a2.Stop())
	require.Empty(t, set.list())
	require.Equal(t, []float64{0}, buffered(), "the other worker's series")
	v, release, err := w1.Acquire(coordinatorSetKey, func() (io.Closer, error) { return newCoordinatorSet(nil), nil })
	require.NoError(t, err)
	require.NotSame(t, set, v, "the worker's set closed with its last coordinator")
	require.NoError(t, release())
}
