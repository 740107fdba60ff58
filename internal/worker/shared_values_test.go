package worker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

const sharingSinkClass = "io.connectd.test.SharingSinkConnector"

var sharingSinkPlugin = connect.Plugin{Class: sharingSinkClass, Type: connect.PluginSink, New: func() any { return &sharingSink{} }}

// sharingSink is the recording sink whose tasks hold a value of their worker's shared values from Start to
// Stop, as the Iceberg sink's tasks hold their coordinator.
type sharingSink struct{ sinktest.Connector }

func (c *sharingSink) NewTask() connect.SinkTask { return &sharingTask{} }

type sharingTask struct {
	sinktest.Task
	release func() error
}

// heldValue is the value the sharing tasks hold; it counts its Close calls.
type heldValue struct{ closed atomic.Int32 }

func (v *heldValue) Close() error { v.closed.Add(1); return nil }

// heldValues is the value each sharing task got, by sink.id and task index.
var heldValues sync.Map

func (t *sharingTask) Start(props map[string]string) error {
	if err := t.Task.Start(props); err != nil {
		return err
	}
	wv, ok := t.Ctx.(connect.WorkerValues)
	if !ok {
		return errors.New("the task context has no shared values")
	}
	v, release, err := wv.SharedValues().Acquire("github.com/connectd/connectd/internal/worker_test.held",
		func() (io.Closer, error) { return &heldValue{}, nil })
	if err != nil {
		return err
	}
	t.release = release
	heldValues.Store(props["sink.id"]+"/"+props["task.index"], v.(*heldValue))
	return nil
}

func (t *sharingTask) Stop() error {
	if t.release == nil {
		return nil
	}
	return t.release()
}

// TestWorkerSharedValues: two tasks of a connector on one worker get the same value under a key, and it is
// closed once, when the last of them stops; the connector's task on another worker of the process gets a
// value of its own, as in another process.
func TestWorkerSharedValues(t *testing.T) {
	const topic, parts = "shared-in", 2
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topic))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	addr := cluster.ListenAddrs()[0]
	newWorker := func() *worker.Worker {
		cfg, err := worker.ParseConfig(map[string]string{
			"bootstrap.servers":                 addr,
			"key.converter":                     sinktest.StringConverterClass,
			"value.converter":                   sinktest.StringConverterClass,
			"header.converter":                  "io.connectd.test.TestHeaderConverter",
			"task.shutdown.graceful.timeout.ms": "30000",
			"consumer.heartbeat.interval.ms":    "100",
		})
		require.NoError(t, err)
		w := worker.New(cfg, testRegistry(), &taskStates{})
		t.Cleanup(w.Stop)
		return w
	}
	w1, w2 := newWorker(), newWorker()

	const conn = "sharing"
	sinkID := fmt.Sprintf("sharing-%d", time.Now().UnixNano())
	start := func(w *worker.Worker, task int) state.TaskID {
		props := map[string]string{
			"name": conn, "connector.class": sharingSinkClass, "tasks.max": "3", "topics": topic,
			"sink.id": sinkID, "task.index": fmt.Sprint(task),
		}
		id := state.TaskID{Connector: conn, Task: task}
		require.NoError(t, w.StartTask(id, props, props, state.Started))
		return id
	}
	held := func(task int) *heldValue {
		var v any
		require.Eventually(t, func() bool {
			var ok bool
			v, ok = heldValues.Load(fmt.Sprintf("%s/%d", sinkID, task))
			return ok
		}, 10*time.Second, 10*time.Millisecond, "task %d never started", task)
		return v.(*heldValue)
	}
	// stop stops a task once the group is stable with every running task a member: kfake does not answer the
	// join of a member that leaves in the middle of one, so that stop would wait out the graceful timeout.
	members := 3
	stop := func(w *worker.Worker, id state.TaskID) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := cluster.WaitGroupInfo(ctx, "connect-"+conn, func(g *kfake.GroupInfo) bool {
			return g != nil && g.State == "Stable" && len(g.Members) == members && g.NumAssigned() == parts
		})
		require.NoError(t, err, "the group did not settle before stopping %s", id)
		w.StopTasks([]state.TaskID{id})
		members--
	}

	t0, t1, t2 := start(w1, 0), start(w1, 1), start(w2, 2)
	v0, v1, v2 := held(0), held(1), held(2)
	require.Same(t, v0, v1, "the tasks of one worker share the value")
	require.NotSame(t, v0, v2, "another worker's task has its own")

	stop(w1, t0)
	require.Zero(t, v0.closed.Load(), "closed while task 1 still holds it")
	stop(w1, t1)
	require.EqualValues(t, 1, v0.closed.Load(), "the last task's release closes the value")
	require.Zero(t, v2.closed.Load(), "the other worker's value closed with this worker's")
	stop(w2, t2)
	require.EqualValues(t, 1, v2.closed.Load())
}
