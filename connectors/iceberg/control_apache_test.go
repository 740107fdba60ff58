package iceberg

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/commit"
	ae "github.com/connectd/connectd/connectors/iceberg/commit/apacheevents"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// apacheStartCommit is a START_COMMIT event of the Apache Iceberg sink for the group connect-cdc-golden, as
// its own classes encode it (testdata/iceberg/apache-events/capture.sh).
func apacheStartCommit(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "iceberg", "apache-events", "start-commit.b64"))
	require.NoError(t, err)
	ev, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return ev
}

// TestControlTopicApacheEventsFailTasks: under the connectd protocol, an Apache sink's event of this connector on
// the control topic (a JVM worker runs some of its tasks) fails the tasks with the reason instead of committing
// half of the connector; another connector's events change nothing.
func TestControlTopicApacheEventsFailTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-apache")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	ctlTopic := kafkatest.UniqueName(t, "ctl")
	props, _ := sinkProps(t, map[string]string{
		"topics":                             topic,
		"iceberg.tables":                     "shop.events",
		"iceberg.control.coordination":       "topic",
		"iceberg.control.topic":              ctlTopic,
		"iceberg.control.commit.interval-ms": "300",
		"iceberg.connect.group-id":           "connect-cdc-golden",
		"iceberg.control.protocol":           "connectd",
	})
	task := startProcTask(t, props, "a:8083", addr)
	require.NoError(t, task.Open([]connect.TopicPartition{{Topic: topic, Partition: 0}}))
	put := func(off int64) error {
		return task.Put(context.Background(), []*connect.SinkRecord{{Topic: topic, Partition: 0, Offset: off,
			Value: map[string]any{"id": off}}})
	}
	require.NoError(t, put(0))

	prod := kafkatest.NewClient(t, addr, kgo.AllowAutoTopicCreation())
	send := func(v []byte) {
		err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: ctlTopic, Key: []byte("jvm-producer"), Value: v}).FirstErr()
		require.NoError(t, err)
	}
	other := strings.Replace(string(apacheStartCommit(t)), "connect-cdc-golden", "connect-cdc-others", 1)
	send([]byte(other))
	off := int64(1)
	require.Never(t, func() bool { off++; return put(off) != nil }, 2*time.Second, 100*time.Millisecond, "another connector's events")

	send(apacheStartCommit(t))
	var perr error
	require.Eventually(t, func() bool { off++; perr = put(off); return perr != nil }, 60*time.Second, 100*time.Millisecond)
	require.Contains(t, perr.Error(), "carries the Apache Iceberg sink's events for this connector (group connect-cdc-golden)")
}

// TestControlTopicApacheTwoProcesses: two worker processes run an append connector under the Apache sink's
// protocol. Every round's answers commit the source offsets to the connector's group in their transaction,
// the committer's snapshots carry the Apache summary keys and commit its group <group>-coord, and the table
// holds every record once (DuckDB).
func TestControlTopicApacheTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-apache2")
	const parts = 4
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
	ctlTopic := kafkatest.UniqueName(t, "ctl")
	props, _ := sinkProps(t, map[string]string{
		"topics":                             topic,
		"iceberg.tables":                     "shop.events",
		"iceberg.control.coordination":       "topic",
		"iceberg.control.topic":              ctlTopic,
		"iceberg.control.commit.interval-ms": "300",
		"iceberg.control.commit.timeout-ms":  "10000",
	})
	cfg, err := ParseConfig(props)
	require.NoError(t, err)
	require.Equal(t, commit.ProtocolApache, cfg.ControlProtocol)
	a := startProcTask(t, props, "a:8083", addr)
	b := startProcTask(t, props, "b:8083", addr)
	tp := func(p int32) connect.TopicPartition { return connect.TopicPartition{Topic: topic, Partition: p} }
	require.NoError(t, a.Open([]connect.TopicPartition{tp(0), tp(1)})) // a holds the first partition: committer
	require.NoError(t, b.Open([]connect.TopicPartition{tp(2), tp(3)}))

	groupOffsets := func(group, topic string, n int32) []int64 {
		committed := kafkatest.CommittedOffsets(t, addr, group, topic)
		out := make([]int64, n)
		for i := range out {
			out[i] = committed[int32(i)]
		}
		return out
	}

	var offs [parts]int64
	owner := func(p int32) *Task {
		if p < 2 {
			return a
		}
		return b
	}
	total := 0
	const rounds = 4
	for r := range rounds {
		for p := int32(0); p < parts; p++ {
			var recs []*connect.SinkRecord
			for range 50 + r*10 + int(p) {
				recs = append(recs, &connect.SinkRecord{Topic: topic, Partition: p, Offset: offs[p],
					Value: map[string]any{"id": int64(total), "name": "n" + strconv.Itoa(total%5)}})
				offs[p]++
				total++
			}
			require.NoError(t, owner(p).Put(context.Background(), recs))
		}
		require.Eventually(t, func() bool {
			got := groupOffsets(cfg.GroupID, topic, parts)
			return slices.Equal(got, offs[:])
		}, 60*time.Second, 50*time.Millisecond, "round %d: the answers' transactions commit the source offsets; stats a=%+v b=%+v",
			r, a.coord.stats(), b.coord.stats())
	}
	var meta string
	require.Eventually(t, func() bool {
		var n string
		_, meta = loadTable(t, props, "shop.events")
		if rows := duckRows(t, meta, "SELECT count(*) FROM t"); len(rows) == 1 {
			n = rows[0]
		}
		return n == strconv.Itoa(total)
	}, 60*time.Second, 200*time.Millisecond, "the committer commits every answer")
	require.Equal(t, []string{fmt.Sprintf("%d|%d", total, total)}, duckRows(t, meta, "SELECT count(*), count(DISTINCT id) FROM t"))

	cat, _ := loadTable(t, props, "shop.events")
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.events"))
	require.NoError(t, err)
	key := commit.ApacheOffsetsSummaryKey(ctlTopic, cfg.GroupID)
	commits := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil || s.Summary.Properties[commit.ApacheSummaryCommitID] == "" {
			continue
		}
		commits++
		var read map[string]int64 // control partition → next offset
		err := json.Unmarshal([]byte(s.Summary.Properties[key]), &read)
		for p := range read {
			if err == nil {
				_, err = strconv.ParseInt(p, 10, 32)
			}
		}
		require.NoError(t, err, "snapshot %d: %s", s.SnapshotID, key)
	}
	require.Positive(t, commits)
	require.Eventually(t, func() bool { return groupOffsets(cfg.GroupID+"-coord", ctlTopic, 1)[0] > 0 }, 30*time.Second, 100*time.Millisecond,
		"the committer commits how far it read to %s-coord", cfg.GroupID)
}

// TestFenceJVMTaskTransactions: a JVM task that died inside a transaction blocks read_committed readers of the
// control topic (the committer) until the broker's transaction timeout; connectd taking the task over ends that
// transaction at once.
func TestFenceJVMTaskTransactions(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-fence")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	ctlTopic := kafkatest.UniqueName(t, "ctl")
	kafkatest.CreateTopic(t, addr, ctlTopic, 1, nil)

	// the dead JVM task: a transaction begun and never ended
	jvm := kafkatest.NewClient(t, addr, kgo.TransactionalID("jvm-worker-txn-dead-0"),
		kgo.TransactionTimeout(5*time.Minute), kgo.RequiredAcks(kgo.AllISRAcks()))
	require.NoError(t, jvm.BeginTransaction())
	require.NoError(t, jvm.ProduceSync(context.Background(), &kgo.Record{Topic: ctlTopic, Value: []byte("open")}).FirstErr())
	plain := kafkatest.NewClient(t, addr, kgo.RequiredAcks(kgo.AllISRAcks()))
	require.NoError(t, plain.ProduceSync(context.Background(), &kgo.Record{Topic: ctlTopic, Value: []byte("after")}).FirstErr())

	cons := kafkatest.NewClient(t, addr, kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{ctlTopic: {0: kgo.NewOffset().AtStart()}}))
	// next is the first record read_committed reads within wait, or nil.
	next := func(wait time.Duration) *kgo.Record {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			fs.EachError(func(_ string, _ int32, err error) {
				if ctx.Err() == nil {
					require.NoError(t, err)
				}
			})
			if recs := fs.Records(); len(recs) > 0 {
				return recs[0]
			}
		}
		return nil
	}
	if m := next(2 * time.Second); m != nil {
		t.Fatalf("read_committed read %q past an open transaction", m.Value)
	}

	props, _ := sinkProps(t, map[string]string{
		"topics": topic, "iceberg.tables": "shop.events", "iceberg.control.coordination": "topic",
		"iceberg.control.topic": ctlTopic, KeyTxnPrefix: "jvm-", KeyTxnSuffix: "-txn-dead-0",
	})
	startProcTask(t, props, "a:8083", addr)
	m := next(30 * time.Second)
	if m == nil {
		t.Fatal("the JVM task's open transaction still blocks the control topic")
	}
	require.Equal(t, "after", string(m.Value), "the open transaction was aborted")
}

// TestApacheCommitterStandsByAJVMCoordinator: while a JVM task's coordinator of the connector starts and completes
// commits (its events carry no connectd mark), connectd's committer commits nothing; once it falls silent,
// connectd's committer commits every file the answers wrote meanwhile, each once.
func TestApacheCommitterStandsByAJVMCoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-standby")
	kafkatest.CreateTopic(t, addr, topic, 2, nil)
	ctlTopic := kafkatest.UniqueName(t, "ctl")
	props, _ := sinkProps(t, map[string]string{
		"topics": topic, "iceberg.tables": "shop.events", "iceberg.control.coordination": "topic",
		"iceberg.control.topic": ctlTopic, "iceberg.control.commit.interval-ms": "300", "iceberg.control.commit.timeout-ms": "2000",
	})
	cfg, err := ParseConfig(props)
	require.NoError(t, err)
	a := startProcTask(t, props, "a:8083", addr)
	tp := func(p int32) connect.TopicPartition { return connect.TopicPartition{Topic: topic, Partition: p} }
	require.NoError(t, a.Open([]connect.TopicPartition{tp(0), tp(1)}))

	// the JVM coordinator: START_COMMIT and COMMIT_COMPLETE every 300 ms, committing nothing itself, a member of
	// the committer group as the Apache sink's coordinator is
	prod := kafkatest.NewClient(t, addr, kgo.AllowAutoTopicCreation())
	leave := joinCommitterGroup(t, addr, cfg.GroupID, ctlTopic)
	send := func(pt ae.PayloadType, id uuid.UUID) {
		b, err := ae.Encode(&ae.Event{ID: uuid.New(), Type: pt, Timestamp: time.Now().UTC().Truncate(time.Microsecond), GroupID: cfg.GroupID, CommitID: id})
		require.NoError(t, err)
		err = prod.ProduceSync(context.Background(), &kgo.Record{Topic: ctlTopic, Key: []byte("jvm"), Value: b}).FirstErr()
		require.NoError(t, err)
	}
	stop := make(chan struct{})
	jvmDone := make(chan struct{})
	go func() {
		defer close(jvmDone)
		for {
			id := uuid.New()
			send(ae.StartCommit, id)
			time.Sleep(150 * time.Millisecond)
			send(ae.CommitComplete, id)
			select {
			case <-stop:
				return
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()

	total := 0
	var offs [2]int64
	for range 3 {
		for p := int32(0); p < 2; p++ {
			var recs []*connect.SinkRecord
			for range 40 {
				recs = append(recs, &connect.SinkRecord{Topic: topic, Partition: p, Offset: offs[p], Value: map[string]any{"id": int64(total)}})
				offs[p]++
				total++
			}
			require.NoError(t, a.Put(context.Background(), recs))
		}
		time.Sleep(time.Second)
	}
	require.Eventually(t, func() bool {
		pc, err := a.PreCommit(context.Background(), nil)
		require.NoError(t, err)
		return pc[tp(0)].Offset == offs[0] && pc[tp(1)].Offset == offs[1]
	}, 30*time.Second, 50*time.Millisecond, "the answers to the JVM coordinator's commits commit the source offsets")
	time.Sleep(2 * time.Second)
	connectdCommits := func() (n int) {
		cat, err := catalogx.Open(context.Background(), cfg.CatalogName, cfg.CatalogProps)
		require.NoError(t, err)
		tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.events"))
		if err != nil {
			return 0
		}
		for _, s := range tbl.Metadata().Snapshots() {
			if s.Summary != nil && s.Summary.Properties[commit.ApacheSummaryCommitID] != "" {
				n++
			}
		}
		return n
	}
	require.Zero(t, connectdCommits(), "connectd's committer committed beside a committing JVM coordinator")

	close(stop)
	<-jvmDone
	leave()
	var meta string
	require.Eventually(t, func() bool {
		if connectdCommits() == 0 {
			return false
		}
		_, meta = loadTable(t, props, "shop.events")
		rows := duckRows(t, meta, "SELECT count(*) FROM t")
		return len(rows) == 1 && rows[0] == strconv.Itoa(total)
	}, 60*time.Second, 250*time.Millisecond, "connectd's committer takes over once the JVM coordinator is silent")
	require.Equal(t, []string{fmt.Sprintf("%d|%d", total, total)}, duckRows(t, meta, "SELECT count(*), count(DISTINCT id) FROM t"))
}

// notingProcCtx is a process's task context that records the task's status notes.
type notingProcCtx struct {
	*procCtx
	notes notingCtx
}

func (c *notingProcCtx) NoteStatus(note string) { c.notes.NoteStatus(note) }

// TestApacheParticipantStuckBehindAFailingJVMCoordinator: a JVM coordinator starts commits every 300 ms and
// completes none (its catalog commits fail). connectd's task answers each START_COMMIT, which commits the
// source offsets, yet no snapshot holds its records: past the stuck threshold its status says so, naming the
// JVM coordinator; a COMMIT_COMPLETE of a commit it answered clears the note.
func TestApacheParticipantStuckBehindAFailingJVMCoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kafka broker")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ctl-stuck")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	ctlTopic := kafkatest.UniqueName(t, "ctl")
	props, _ := sinkProps(t, map[string]string{
		"topics": topic, "iceberg.tables": "shop.events", "iceberg.control.coordination": "topic",
		"iceberg.control.topic": ctlTopic, "iceberg.control.commit.interval-ms": "300", "iceberg.control.commit.timeout-ms": "2000",
	})
	cfg, err := ParseConfig(props)
	require.NoError(t, err)
	pctx := &notingProcCtx{procCtx: &procCtx{fakeCtx: fakeCtx{props: props}, id: "a:8083", kafka: map[string]string{"bootstrap.servers": addr}}}
	coord, err := newCoordinator(cfg, pctx)
	require.NoError(t, err)
	a := &Task{coord: coord, stuckAfter: 3 * time.Second}
	a.Initialize(pctx)
	require.NoError(t, a.Start(props))
	t.Cleanup(func() { _ = a.Stop() })
	tp := connect.TopicPartition{Topic: topic, Partition: 0}
	require.NoError(t, a.Open([]connect.TopicPartition{tp}))

	prod := kafkatest.NewClient(t, addr, kgo.AllowAutoTopicCreation())
	send := func(pt ae.PayloadType, id uuid.UUID) {
		b, err := ae.Encode(&ae.Event{ID: uuid.New(), Type: pt, Timestamp: time.Now().UTC().Truncate(time.Microsecond), GroupID: cfg.GroupID, CommitID: id})
		require.NoError(t, err)
		err = prod.ProduceSync(context.Background(), &kgo.Record{Topic: ctlTopic, Key: []byte("jvm"), Value: b}).FirstErr()
		require.NoError(t, err)
	}
	joinCommitterGroup(t, addr, cfg.GroupID, ctlTopic)
	var idsMu sync.Mutex
	var ids []uuid.UUID
	succeed := make(chan struct{}, 1)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the JVM coordinator: commits start, none completes until told
		defer close(done)
		for {
			id := uuid.New()
			idsMu.Lock()
			ids = append(ids, id)
			idsMu.Unlock()
			send(ae.StartCommit, id)
			select {
			case <-stop:
				return
			case <-succeed:
				time.Sleep(200 * time.Millisecond) // the task's answer
				send(ae.CommitComplete, id)
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); <-done }()
	var recs []*connect.SinkRecord
	for i := range 20 {
		recs = append(recs, &connect.SinkRecord{Topic: topic, Partition: 0, Offset: int64(i), Value: map[string]any{"id": int64(i)}})
	}
	start := time.Now()
	require.NoError(t, a.Put(context.Background(), recs))
	require.Eventually(t, func() bool {
		pc, err := a.PreCommit(context.Background(), nil)
		require.NoError(t, err)
		return pc[tp].Offset == 20
	}, 30*time.Second, 50*time.Millisecond, "the answers commit the source offsets")
	require.Eventually(t, func() bool {
		return strings.Contains(pctx.notes.last(), "no commit has made this task's records durable")
	},
		30*time.Second, 50*time.Millisecond, "the status never said the records are not in a snapshot: %q", pctx.notes.last())
	t.Logf("status after %s: %s", time.Since(start).Round(time.Millisecond), pctx.notes.last())
	require.Contains(t, pctx.notes.last(), "no COMMIT_COMPLETE has covered that answer")
	require.Contains(t, pctx.notes.last(), "a JVM task's coordinator")

	time.Sleep(10 * time.Second) // well past the commit timeout: the coordinator still starts commits
	require.Contains(t, pctx.notes.last(), "a JVM task's coordinator", "connectd's committer took over from a live JVM coordinator")
	succeed <- struct{}{} // one commit completes: it covers the task's answers
	require.Eventually(t, func() bool { return pctx.notes.last() == "" }, 30*time.Second, 50*time.Millisecond,
		"a COMMIT_COMPLETE of an answered commit clears the note: %q", pctx.notes.last())
}

// joinCommitterGroup makes a simulated JVM coordinator a member of the committer group <group>-coord, as the
// Apache sink's coordinator is (it subscribes to the control topic in that group), until leave or the test's
// end. It waits until the broker lists the member.
func joinCommitterGroup(t *testing.T, addr, group, ctlTopic string) (leave func()) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group+"-coord"), kgo.ConsumeTopics(ctlTopic), kgo.AllowAutoTopicCreation())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	adm := kadm.NewClient(kafkatest.NewClient(t, addr))
	require.Eventually(t, func() bool {
		d, err := adm.DescribeGroups(context.Background(), group+"-coord")
		return err == nil && d.Error() == nil && len(d[group+"-coord"].Members) == 1
	}, 30*time.Second, 100*time.Millisecond, "the simulated JVM coordinator joins %s-coord", group)
	var once sync.Once
	leave = func() {
		once.Do(func() {
			cancel()
			<-done
			cl.Close() // leaves the group
		})
	}
	t.Cleanup(leave)
	return leave
}
