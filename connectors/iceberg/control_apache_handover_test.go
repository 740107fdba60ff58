package iceberg

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	ae "github.com/connectd/connectd/connectors/iceberg/commit/apacheevents"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// txnRecordingCtx is a process's task context whose Kafka clients record the transactional ids the process
// begins transactions with.
type txnRecordingCtx struct {
	*procCtx
	clients *txnRecordingClients
}

func (c *txnRecordingCtx) KafkaClients() connect.KafkaClients { return c.clients }

type txnRecordingClients struct {
	kafka.PluginClients
	mu  sync.Mutex
	ids []string
}

func (c *txnRecordingClients) NewTransactionalProducer(props map[string]string, id string) (connect.TransactionalProducer, error) {
	p, err := c.PluginClients.NewTransactionalProducer(props, id)
	if err != nil {
		return nil, err
	}
	return &txnRecordingProducer{TransactionalProducer: p, id: id, c: c}, nil
}

func (c *txnRecordingClients) began() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ids)
}

type txnRecordingProducer struct {
	connect.TransactionalProducer
	id string
	c  *txnRecordingClients
}

func (p *txnRecordingProducer) BeginTransaction() error {
	p.c.mu.Lock()
	if !slices.Contains(p.c.ids, p.id) {
		p.c.ids = append(p.c.ids, p.id)
	}
	p.c.mu.Unlock()
	return p.TransactionalProducer.BeginTransaction()
}

// TestApacheTaskTakeoverEndsTheDeadWorkersTransaction: a connectd worker dies inside the transaction of an answer
// (simulated: after it ran the task and answered, a producer with each transactional id it answered with begins
// a transaction, writes an event to the control topic and is abandoned). Until that transaction ends, every
// read_committed reader of the control topic stops at it. Another worker taking the task over (same task
// config) ends it at once: its next snapshot lands within the commit interval + 15 s, not at the broker's
// transaction timeout.
func TestApacheTaskTakeoverEndsTheDeadWorkersTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-takeover")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	ctlTopic := kafkatest.UniqueName(t, "ctl")
	const interval = time.Second
	connProps, _ := sinkProps(t, map[string]string{
		"topics": topic, "iceberg.tables": "shop.events", "iceberg.control.coordination": "topic",
		"iceberg.control.topic": ctlTopic, "iceberg.control.commit.interval-ms": strconv.Itoa(int(interval.Milliseconds())),
		"iceberg.control.commit.timeout-ms": "5000",
	})
	conn := &Connector{}
	require.NoError(t, conn.Start(connProps))
	cfgs, err := conn.TaskConfigs(1)
	require.NoError(t, err)
	props := cfgs[0]
	cfg, err := ParseConfig(props)
	require.NoError(t, err)
	tp := connect.TopicPartition{Topic: topic, Partition: 0}
	rows := func() string {
		_, meta := loadTable(t, props, "shop.events")
		if r := duckRows(t, meta, "SELECT count(*) FROM t"); len(r) == 1 {
			return r[0]
		}
		return ""
	}
	recs := func(from, n int) []*connect.SinkRecord {
		var out []*connect.SinkRecord
		for i := from; i < from+n; i++ {
			out = append(out, &connect.SinkRecord{Topic: topic, Partition: 0, Offset: int64(i), Value: map[string]any{"id": int64(i)}})
		}
		return out
	}

	// the worker that dies: it runs the task and answers commits
	clients := &txnRecordingClients{}
	dctx := &txnRecordingCtx{procCtx: &procCtx{fakeCtx: fakeCtx{props: props}, id: "dead:8083",
		kafka: map[string]string{"bootstrap.servers": addr}}, clients: clients}
	dcoord, err := newCoordinator(cfg, dctx)
	require.NoError(t, err)
	dead := &Task{coord: dcoord}
	dead.Initialize(dctx)
	require.NoError(t, dead.Start(props))
	require.NoError(t, dead.Open([]connect.TopicPartition{tp}))
	require.NoError(t, dead.Put(context.Background(), recs(0, 10)))
	require.Eventually(t, func() bool { return rows() == "10" }, 60*time.Second, 100*time.Millisecond, "the first worker commits")
	require.NoError(t, dead.Close([]connect.TopicPartition{tp}))
	require.NoError(t, dead.Stop())
	ids := clients.began()
	require.NotEmpty(t, ids, "the first worker answered in transactions")
	t.Logf("the dead worker answered with transactional ids %q", ids)

	// its death inside an answer: a transaction with each of its ids left open
	ev, err := ae.Encode(&ae.Event{ID: uuid.New(), Type: ae.DataComplete, Timestamp: time.Now().UTC().Truncate(time.Microsecond),
		GroupID: cfg.GroupID, CommitID: uuid.New()})
	require.NoError(t, err)
	for _, id := range ids {
		open := kafkatest.NewClient(t, addr, kgo.TransactionalID(id), kgo.RequiredAcks(kgo.AllISRAcks()))
		require.NoError(t, open.BeginTransaction())
		require.NoError(t, open.ProduceSync(context.Background(), &kgo.Record{Topic: ctlTopic, Key: []byte("dead"), Value: ev}).FirstErr())
	}

	// another worker takes the task over
	start := time.Now()
	next := startProcTask(t, props, "next:8083", addr)
	require.NoError(t, next.Open([]connect.TopicPartition{tp}))
	require.NoError(t, next.Put(context.Background(), recs(10, 10)))
	deadline := interval + 15*time.Second
	require.Eventually(t, func() bool { return rows() == "20" }, deadline, 100*time.Millisecond,
		"no snapshot within %s of the takeover: the dead worker's open transaction blocks the control topic", deadline)
	t.Logf("the next snapshot landed %s after the takeover", time.Since(start).Round(time.Millisecond))
}

// TestApacheFencedTaskFailsAlone: a task of one process is fenced by the same task started elsewhere (its answer
// producer's transactional id initialized by the other worker): its next answer fails that task alone, and the
// process's other task of the connector keeps answering and committing its offsets.
func TestApacheFencedTaskFailsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-fenced")
	kafkatest.CreateTopic(t, addr, topic, 2, nil)
	connProps, _ := sinkProps(t, map[string]string{
		"topics": topic, "iceberg.tables": "shop.events", "iceberg.control.coordination": "topic",
		"iceberg.control.topic": kafkatest.UniqueName(t, "ctl"), "iceberg.control.commit.interval-ms": "300",
		"iceberg.control.commit.timeout-ms": "5000",
	})
	conn := &Connector{}
	require.NoError(t, conn.Start(connProps))
	cfgs, err := conn.TaskConfigs(2)
	require.NoError(t, err)
	cfg, err := ParseConfig(cfgs[0])
	require.NoError(t, err)

	// process a runs both tasks
	actx := &procCtx{fakeCtx: fakeCtx{props: cfgs[0]}, id: "a:8083", kafka: map[string]string{"bootstrap.servers": addr}}
	coord, err := newCoordinator(cfg, actx)
	require.NoError(t, err)
	tasks := make([]*Task, 2)
	for i := range tasks {
		tasks[i] = &Task{coord: coord}
		tasks[i].Initialize(actx)
		require.NoError(t, tasks[i].Start(cfgs[i]))
		t.Cleanup(func() { _ = tasks[i].Stop() })
		require.NoError(t, tasks[i].Open([]connect.TopicPartition{{Topic: topic, Partition: int32(i)}}))
	}
	offs := [2]int64{}
	put := func(i int) error {
		var recs []*connect.SinkRecord
		for range 5 {
			recs = append(recs, &connect.SinkRecord{Topic: topic, Partition: int32(i), Offset: offs[i], Value: map[string]any{"id": offs[i]}})
			offs[i]++
		}
		return tasks[i].Put(context.Background(), recs)
	}
	committed := func(i int) int64 { return kafkatest.CommittedOffsets(t, addr, cfg.GroupID, topic)[int32(i)] }
	for i := range tasks {
		require.NoError(t, put(i))
	}
	require.Eventually(t, func() bool { return committed(0) == offs[0] && committed(1) == offs[1] }, 60*time.Second, 50*time.Millisecond,
		"both tasks' answers commit their offsets")

	// task 0 starts on process b too: its producer fences process a's
	startProcTask(t, cfgs[0], "b:8083", addr)
	var err0 error
	require.Eventually(t, func() bool {
		err0 = put(0)
		return err0 != nil
	}, 60*time.Second, 300*time.Millisecond, "the fenced task fails")
	t.Logf("the fenced task: %v", err0)
	for range 3 {
		require.NoError(t, put(1), "the other task of the process")
	}
	require.Eventually(t, func() bool { return committed(1) == offs[1] }, 60*time.Second, 50*time.Millisecond,
		"the other task keeps answering")
}
