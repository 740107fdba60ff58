package herder_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

type env struct {
	t      *testing.T
	addr   string
	h      *herder.Standalone
	w      *worker.Worker
	status *herder.StatusTracker
}

func newEnv(t *testing.T, extra map[string]string) *env {
	addr := kafkatest.Bootstrap(t)
	wp := map[string]string{
		"bootstrap.servers":                 addr,
		"key.converter":                     sinktest.StringConverterClass,
		"value.converter":                   sinktest.StringConverterClass,
		"header.converter":                  "io.connectd.test.TestHeaderConverter",
		"offset.flush.interval.ms":          "500",
		"task.shutdown.graceful.timeout.ms": "10000",
		"listeners":                         "http://127.0.0.1:18083",
	}
	for k, v := range extra {
		wp[k] = v
	}
	cfg, err := worker.ParseConfig(wp)
	require.NoError(t, err)
	st := herder.NewStatusTracker(cfg.WorkerID())
	w := worker.New(cfg, testRegistry(), st)
	h := herder.NewStandalone(w, st)
	require.NoError(t, h.Start(context.Background()))
	t.Cleanup(h.Stop)
	return &env{t: t, addr: addr, h: h, w: w, status: st}
}

var produceN = kafkatest.ProduceN

func (e *env) create(name string, cfg map[string]string) {
	e.t.Helper()
	_, created, err := e.h.PutConnectorConfig(context.Background(), name, cfg, "", false)
	require.NoError(e.t, err)
	require.True(e.t, created)
}

func (e *env) waitState(name string, want herder.State, tasks int) *herder.ConnectorStateInfo {
	e.t.Helper()
	var last *herder.ConnectorStateInfo
	require.Eventually(e.t, func() bool {
		st, err := e.h.ConnectorStatus(context.Background(), name)
		if err != nil {
			return false
		}
		last = st
		if st.Connector.State != want || len(st.Tasks) != tasks {
			return false
		}
		for _, ts := range st.Tasks {
			if ts.State != want {
				return false
			}
		}
		return true
	}, 60*time.Second, 50*time.Millisecond, "waiting for %s %s: last %+v", name, want, last)
	return last
}

func sinkConfig(topic, id string, tasks int) map[string]string {
	return map[string]string{
		"name":            id,
		"connector.class": sinktest.Class,
		"tasks.max":       fmt.Sprint(tasks),
		"topics":          topic,
		"sink.id":         id,
	}
}

// valuesDistinct checks exactly-once delivery of v<from>..v<to-1> and per-partition offset order.
func checkDelivery(t *testing.T, recs []sinktest.Record, n int) {
	t.Helper()
	seen := map[string]int{}
	lastOff := map[int32]int64{}
	for _, r := range recs {
		seen[r.Value]++
		if prev, ok := lastOff[r.Partition]; ok {
			require.Greater(t, r.Offset, prev, "partition %d out of order", r.Partition)
		}
		lastOff[r.Partition] = r.Offset
	}
	for i := 0; i < n; i++ {
		require.Equal(t, 1, seen[fmt.Sprintf("v%d", i)], "v%d", i)
	}
	require.Len(t, recs, n)
}

func TestStandaloneLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "life")
	kafkatest.CreateTopic(t, e.addr, topic, 3, nil)
	produceN(t, e.addr, topic, 0, 300)
	name := kafkatest.UniqueName(t, "life-sink")
	e.create(name, sinkConfig(topic, name, 2))
	sink := sinktest.For(name)
	e.waitState(name, herder.StateRunning, 2)
	require.Eventually(t, func() bool { return sink.Count() >= 300 }, 60*time.Second, 20*time.Millisecond)
	checkDelivery(t, sink.Records(), 300)

	// duplicate create
	_, _, err := e.h.PutConnectorConfig(ctx, name, sinkConfig(topic, name, 2), "", false)
	var re *herder.RestError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, 409, re.Status)
	assert.Equal(t, "Connector "+name+" already exists", re.Message)

	// pause: nothing delivered while paused
	require.NoError(t, e.h.PauseConnector(ctx, name))
	e.waitState(name, herder.StatePaused, 2)
	produceN(t, e.addr, topic, 300, 60)
	time.Sleep(2 * time.Second)
	assert.Equal(t, 300, sink.Count(), "delivered while paused")
	require.NoError(t, e.h.ResumeConnector(ctx, name))
	e.waitState(name, herder.StateRunning, 2)
	require.Eventually(t, func() bool { return sink.Count() >= 360 }, 60*time.Second, 20*time.Millisecond)
	checkDelivery(t, sink.Records(), 360)

	// stop: tasks gone, offsets readable
	require.NoError(t, e.h.StopConnector(ctx, name))
	st, err := e.h.ConnectorStatus(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, herder.StateStopped, st.Connector.State)
	assert.Empty(t, st.Tasks)
	assert.Empty(t, e.w.TasksOf(name))
	offs, err := e.h.ConnectorOffsets(ctx, name)
	require.NoError(t, err)
	require.Len(t, offs.Offsets, 3)
	var total int64
	for _, o := range offs.Offsets {
		assert.Equal(t, topic, o.Partition["kafka_topic"])
		total += o.Offset["kafka_offset"].(int64)
	}
	assert.Equal(t, int64(360), total, "committed offsets cover every record")

	// alter: rewind partition 0 to 0, reset partition 1 (re-read from earliest); then resume
	committed := kafkatest.CommittedOffsets(t, e.addr, "connect-"+name, topic)
	msg, err := e.h.AlterConnectorOffsets(ctx, name, herder.ConnectorOffsets{Offsets: []herder.ConnectorOffset{
		{Partition: map[string]any{"kafka_topic": topic, "kafka_partition": float64(0)}, Offset: map[string]any{"kafka_offset": "0"}},
		{Partition: map[string]any{"kafka_topic": topic, "kafka_partition": 1}, Offset: nil},
	}})
	require.NoError(t, err)
	assert.Contains(t, msg, "altered successfully")
	after := kafkatest.CommittedOffsets(t, e.addr, "connect-"+name, topic)
	assert.Equal(t, int64(0), after[0])
	_, has1 := after[1]
	assert.False(t, has1, "partition 1 offset reset")
	assert.Equal(t, committed[2], after[2])
	before := sink.Count()
	require.NoError(t, e.h.ResumeConnector(ctx, name))
	e.waitState(name, herder.StateRunning, 2)
	want := before + int(committed[0]) + int(committed[1])
	require.Eventually(t, func() bool { return sink.Count() >= want }, 60*time.Second, 20*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	assert.Equal(t, want, sink.Count(), "redelivered exactly partitions 0 and 1")

	// alter is refused unless stopped
	_, err = e.h.ResetConnectorOffsets(ctx, name)
	require.True(t, errors.As(err, &re))
	assert.Equal(t, 400, re.Status)
	assert.Contains(t, re.Message, "Connectors must be in the STOPPED state")

	// restart with tasks → RESTARTING plan, then RUNNING
	plan, err := e.h.RestartConnectorAndTasks(ctx, herder.RestartRequest{Connector: name, IncludeTasks: true})
	require.NoError(t, err)
	assert.Equal(t, herder.StateRestarting, plan.Connector.State)
	for _, ts := range plan.Tasks {
		assert.Equal(t, herder.StateRestarting, ts.State)
	}
	e.waitState(name, herder.StateRunning, 2)

	// delete: committed offsets are what was flushed (everything delivered)
	produceN(t, e.addr, topic, 360, 30)
	require.Eventually(t, func() bool { return sink.Count() >= want+30 }, 60*time.Second, 20*time.Millisecond)
	require.NoError(t, e.h.DeleteConnector(ctx, name))
	final := kafkatest.CommittedOffsets(t, e.addr, "connect-"+name, topic)
	var sum int64
	for _, o := range final {
		sum += o
	}
	assert.Equal(t, int64(390), sum)
	_, err = e.h.ConnectorStatus(ctx, name)
	require.True(t, errors.As(err, &re))
	assert.Equal(t, 404, re.Status)
	assert.Equal(t, "No status found for connector "+name, re.Message)
}

func TestStandalonePutFailures(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "fail")
	kafkatest.CreateTopic(t, e.addr, topic, 1, nil)

	// retriable: the batch is redelivered, the task stays RUNNING, nothing lost or duplicated
	name := kafkatest.UniqueName(t, "retry-sink")
	sink := sinktest.For(name)
	sink.FailRetriable(3)
	produceN(t, e.addr, topic, 0, 50)
	e.create(name, sinkConfig(topic, name, 1))
	require.Eventually(t, func() bool { return sink.Count() >= 50 }, 60*time.Second, 20*time.Millisecond)
	assert.Equal(t, 3, sink.RetriableCalls())
	checkDelivery(t, sink.Records(), 50)
	e.waitState(name, herder.StateRunning, 1)

	// fatal: FAILED with a trace
	sink.FailFatal(errors.New("disk on fire"))
	produceN(t, e.addr, topic, 50, 5)
	var st *herder.ConnectorStateInfo
	require.Eventually(t, func() bool {
		st, _ = e.h.ConnectorStatus(ctx, name)
		return st != nil && len(st.Tasks) == 1 && st.Tasks[0].State == herder.StateFailed
	}, 60*time.Second, 20*time.Millisecond)
	assert.Equal(t, herder.StateRunning, st.Connector.State)
	assert.True(t, strings.HasPrefix(st.Tasks[0].Trace, "org.apache.kafka.connect.errors.ConnectException: Exiting WorkerSinkTask due to unrecoverable exception."), st.Tasks[0].Trace)
	assert.Contains(t, st.Tasks[0].Trace, "disk on fire")

	// fix the cause, restart the task: nothing lost
	sink.FailFatal(nil)
	require.NoError(t, e.h.RestartTask(ctx, herder.ConnectorTaskID{Connector: name, Task: 0}))
	require.Eventually(t, func() bool { return sink.Count() >= 55 }, 60*time.Second, 20*time.Millisecond)
	checkDelivery(t, sink.Records(), 55)
}

func TestStandaloneValidation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	_, _, err := e.h.PutConnectorConfig(ctx, "bad", map[string]string{"name": "bad", "connector.class": sinktest.Class, "tasks.max": "0"}, "", false)
	var re *herder.RestError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, 400, re.Status)
	assert.Equal(t, "Connector configuration is invalid and contains the following 4 error(s):\n"+
		"Invalid value 0 for configuration tasks.max: Value must be at least 1\n"+
		"Must configure one of topics or topics.regex\n"+
		"Must configure one of topics or topics.regex\n"+
		"Missing required configuration \"sink.id\" which has no default value.\n"+
		"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`", re.Message)

	_, _, err = e.h.PutConnectorConfig(ctx, "x", map[string]string{"name": "x", "connector.class": "com.example.Nope", "topics": "t"}, "", false)
	require.EqualError(t, err, "Failed to find any class that implements Connector and which name matches com.example.Nope")

	_, err = e.h.ValidateConnectorConfig(ctx, map[string]string{"topics": "t"})
	require.True(t, errors.As(err, &re))
	assert.Equal(t, 400, re.Status)
	assert.Equal(t, "Connector config {topics=t} contains no connector type", re.Message)
}

func TestStandaloneDeadLetterQueue(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "dlqsrc")
	dlq := topic + "-dlq"
	kafkatest.CreateTopic(t, e.addr, topic, 1, nil)
	name := kafkatest.UniqueName(t, "dlq-sink")
	sink := sinktest.For(name)
	sink.RejectValue("v7")
	var msgs []*kgo.Record
	for i := 0; i < 20; i++ {
		v := fmt.Sprintf("v%d", i)
		if i == 3 {
			v = "POISON"
		}
		msgs = append(msgs, &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte(v),
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte(fmt.Sprint(i))}}})
	}
	kafkatest.Produce(t, e.addr, topic, msgs...)
	cfg := sinkConfig(topic, name, 1)
	cfg["errors.tolerance"] = "all"
	cfg["errors.deadletterqueue.topic.name"] = dlq
	cfg["errors.deadletterqueue.topic.replication.factor"] = "1"
	cfg["errors.deadletterqueue.context.headers.enable"] = "true"
	e.create(name, cfg)
	require.Eventually(t, func() bool { return sink.Count() >= 18 }, 60*time.Second, 20*time.Millisecond)
	got := kafkatest.ConsumeAll(t, e.addr, dlq, 2, 30*time.Second)
	require.Len(t, got, 2)
	hdr := func(m *kgo.Record, k string) string {
		for _, h := range m.Headers {
			if h.Key == k {
				return string(h.Value)
			}
		}
		return ""
	}
	assert.Equal(t, "POISON", string(got[0].Value))
	assert.Equal(t, "k", string(got[0].Key))
	assert.Equal(t, "3", hdr(got[0], "trace"), "original headers kept")
	assert.Equal(t, "VALUE_CONVERTER", hdr(got[0], worker.HeaderStage))
	assert.Equal(t, topic, hdr(got[0], worker.HeaderTopic))
	assert.Equal(t, "0", hdr(got[0], worker.HeaderPartition))
	assert.Equal(t, "3", hdr(got[0], worker.HeaderOffset))
	assert.Equal(t, name, hdr(got[0], worker.HeaderConnectorName))
	assert.Equal(t, "0", hdr(got[0], worker.HeaderTaskID))
	assert.Equal(t, "org.apache.kafka.connect.errors.DataException", hdr(got[0], worker.HeaderExceptionClass))
	assert.Equal(t, "poison record cannot be converted", hdr(got[0], worker.HeaderExceptionMessage))
	assert.NotEmpty(t, hdr(got[0], worker.HeaderExceptionTrace))
	assert.Equal(t, "v7", string(got[1].Value))
	assert.Equal(t, "TASK_PUT", hdr(got[1], worker.HeaderStage))
	assert.Equal(t, "7", hdr(got[1], worker.HeaderOffset))
	assert.Equal(t, got[0].Timestamp.UnixMilli(), got[0].Timestamp.UnixMilli())
	// offsets are committed past the poison records
	require.Eventually(t, func() bool {
		return kafkatest.CommittedOffsets(t, e.addr, "connect-"+name, topic)[0] == 20
	}, 30*time.Second, 100*time.Millisecond)
	_ = ctx
	_ = os.Getenv
}

// A task whose Open fails is FAILED with a trace; the worker process keeps running.
func TestStandaloneOpenFailure(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "openfail")
	kafkatest.CreateTopic(t, e.addr, topic, 1, nil)
	name := kafkatest.UniqueName(t, "openfail-sink")
	sink := sinktest.For(name)
	sink.FailOpen(errors.New("no table"))
	e.create(name, sinkConfig(topic, name, 1))
	var st *herder.ConnectorStateInfo
	require.Eventually(t, func() bool {
		st, _ = e.h.ConnectorStatus(ctx, name)
		return st != nil && len(st.Tasks) == 1 && st.Tasks[0].State == herder.StateFailed
	}, 60*time.Second, 20*time.Millisecond)
	assert.Contains(t, st.Tasks[0].Trace, "no table")
	sink.FailOpen(nil)
	produceN(t, e.addr, topic, 0, 10)
	require.NoError(t, e.h.RestartTask(ctx, herder.ConnectorTaskID{Connector: name, Task: 0}))
	require.Eventually(t, func() bool { return sink.Count() >= 10 }, 60*time.Second, 20*time.Millisecond)
}

// A failed flush rewinds to the last committed offsets: what the sink dropped is delivered again.
func TestStandaloneFlushFailureRewinds(t *testing.T) {
	e := newEnv(t, nil)
	topic := kafkatest.UniqueName(t, "flushfail")
	kafkatest.CreateTopic(t, e.addr, topic, 2, nil)
	name := kafkatest.UniqueName(t, "flushfail-sink")
	sink := sinktest.For(name)
	sink.FailFlush(1)
	produceN(t, e.addr, topic, 0, 100)
	e.create(name, sinkConfig(topic, name, 1))
	require.Eventually(t, func() bool {
		seen := map[string]bool{}
		for _, r := range sink.Records() {
			seen[r.Value] = true
		}
		return len(seen) == 100
	}, 60*time.Second, 50*time.Millisecond, "records dropped by the failed flush never came back")
	require.Eventually(t, func() bool {
		var sum int64
		for _, o := range kafkatest.CommittedOffsets(t, e.addr, "connect-"+name, topic) {
			sum += o
		}
		return sum == 100
	}, 30*time.Second, 100*time.Millisecond)
}

// Pausing answers at once even while the task is stuck in put (the herder never waits on the task).
func TestStandalonePauseWhilePutBlocked(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	topic := kafkatest.UniqueName(t, "blocked")
	kafkatest.CreateTopic(t, e.addr, topic, 1, nil)
	name := kafkatest.UniqueName(t, "blocked-sink")
	sink := sinktest.For(name)
	sink.BlockPuts()
	defer sink.Unblock()
	produceN(t, e.addr, topic, 0, 5)
	e.create(name, sinkConfig(topic, name, 1))
	e.waitState(name, herder.StateRunning, 1)
	time.Sleep(time.Second) // let the task enter put
	done := make(chan error, 1)
	go func() { done <- e.h.PauseConnector(ctx, name) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("pause blocked behind a task stuck in put")
	}
	sink.Unblock()
	e.waitState(name, herder.StatePaused, 1)
	require.NoError(t, e.h.ResumeConnector(ctx, name))
	require.Eventually(t, func() bool { return sink.Count() >= 5 }, 30*time.Second, 20*time.Millisecond)
}
