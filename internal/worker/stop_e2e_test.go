package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

// taskStates records the task states a worker reports.
type taskStates struct {
	mu     sync.Mutex
	states map[state.TaskID][]state.State
}

func (l *taskStates) ConnectorState(string, state.State, string) {}
func (l *taskStates) TaskState(id state.TaskID, s state.State, _ string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.states == nil {
		l.states = map[state.TaskID][]state.State{}
	}
	l.states[id] = append(l.states[id], s)
}

func (l *taskStates) of(id state.TaskID) []state.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]state.State(nil), l.states[id]...)
}

// startSinkTask starts task 0 of a recording sink connector on a worker of its own; the graceful
// timeout is long so that StopTasks returns only once the task really finished.
// The consumer's request timeout is longer than any wait here, so a join returns only when the group
// answers it (not when the client gives up on the request).
func startSinkTask(t testing.TB, addr, topic, connName string, flushInterval time.Duration) (*worker.Worker, state.TaskID, *taskStates, *sinktest.Sink) {
	t.Helper()
	return startSinkTaskOf(t, sinktest.Class, addr, topic, connName, flushInterval)
}

// startSinkTaskOf is startSinkTask for a connector class built on the recording sink.
func startSinkTaskOf(t testing.TB, class, addr, topic, connName string, flushInterval time.Duration) (*worker.Worker, state.TaskID, *taskStates, *sinktest.Sink) {
	t.Helper()
	cfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers":                 addr,
		"key.converter":                     sinktest.StringConverterClass,
		"value.converter":                   sinktest.StringConverterClass,
		"header.converter":                  "io.connectd.test.TestHeaderConverter",
		"offset.flush.interval.ms":          fmt.Sprint(flushInterval.Milliseconds()),
		"task.shutdown.graceful.timeout.ms": "300000",
		"consumer.request.timeout.ms":       "300000",
	})
	require.NoError(t, err)
	states := &taskStates{}
	w := worker.New(cfg, testRegistry(), states)
	t.Cleanup(w.Stop)
	sinkID := kafkatest.UniqueName(t, "sink")
	props := map[string]string{
		"name": connName, "connector.class": class, "tasks.max": "1", "topics": topic,
		"sink.id": sinkID, "task.index": "0",
	}
	id := state.TaskID{Connector: connName, Task: 0}
	require.NoError(t, w.StartTask(id, props, props, state.Started))
	return w, id, states, sinktest.For(sinkID)
}

// groupBlocker is a member of a consumer group that joins, takes every partition and then neither
// heartbeats nor rejoins: the next rebalance of the group waits for it until its session times out.
type groupBlocker struct {
	cl       *kgo.Client
	group    string
	memberID string
}

func blockGroup(t testing.TB, addr, group, topic string, partitions int32, session time.Duration) *groupBlocker {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{topic}
	join := func(memberID string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = group, memberID, "consumer"
		req.SessionTimeoutMillis = int32(session.Milliseconds())
		req.RebalanceTimeoutMillis = int32(2 * session.Milliseconds())
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", meta.AppendTo(nil)
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp
	}
	resp := join("")
	if resp.ErrorCode == kerr.MemberIDRequired.Code {
		resp = join(resp.MemberID)
	}
	require.NoError(t, kerr.ErrorForCode(resp.ErrorCode), "join")
	asg := kmsg.NewConsumerMemberAssignment()
	at := kmsg.NewConsumerMemberAssignmentTopic()
	at.Topic = topic
	for p := int32(0); p < partitions; p++ {
		at.Partitions = append(at.Partitions, p)
	}
	asg.Topics = append(asg.Topics, at)
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.Generation, sync.MemberID = group, resp.Generation, resp.MemberID
	proto, ptype := "range", "consumer"
	sync.Protocol, sync.ProtocolType = &proto, &ptype
	ga := kmsg.NewSyncGroupRequestGroupAssignment()
	ga.MemberID, ga.MemberAssignment = resp.MemberID, asg.AppendTo(nil)
	sync.GroupAssignment = append(sync.GroupAssignment, ga)
	sresp, err := sync.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.NoError(t, kerr.ErrorForCode(sresp.ErrorCode), "sync")
	return &groupBlocker{cl: cl, group: group, memberID: resp.MemberID}
}

// describe returns the group's state and its members' client ids.
func (b *groupBlocker) describe(t testing.TB) (string, []string) {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{b.group}
	resp, err := req.RequestWith(context.Background(), b.cl)
	require.NoError(t, err)
	require.Len(t, resp.Groups, 1)
	g := resp.Groups[0]
	require.NoError(t, kerr.ErrorForCode(g.ErrorCode))
	var clients []string
	for _, m := range g.Members {
		clients = append(clients, m.ClientID)
	}
	return g.State, clients
}

// TestStopSinkTaskInGroupJoin: a task whose consumer waits in its group's join (another member holds the
// rebalance: it neither rejoins nor heartbeats, and its session is a minute) is stopped without waiting for
// the group: StopTasks returns while the join is still pending, the task's consumer has left the group (the
// coordinator dropped it, so the rebalance does not wait for it either), and the task ends UNASSIGNED with
// nothing put and no offset committed.
func TestStopSinkTaskInGroupJoin(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	took := stopInGroupJoin(t, addr)
	t.Logf("stop took %v", took)
}

// stopInGroupJoin runs the scenario of TestStopSinkTaskInGroupJoin and returns how long the stop took.
func stopInGroupJoin(t testing.TB, addr string) time.Duration {
	topic := kafkatest.UniqueName(t, "in")
	kafkatest.CreateTopic(t, addr, topic, 2, nil)
	kafkatest.Produce(t, addr, topic, &kgo.Record{Value: []byte("v0")})
	connName := kafkatest.UniqueName(t, "conn")
	group := "connect-" + connName
	blocker := blockGroup(t, addr, group, topic, 2, time.Minute)

	w, id, states, sink := startSinkTask(t, addr, topic, connName, 200*time.Millisecond)
	consumerClient := fmt.Sprintf("connector-consumer-%s-0", connName)
	require.Eventually(t, func() bool {
		st, members := blocker.describe(t)
		return st == "PreparingRebalance" && len(members) == 2 && (members[0] == consumerClient || members[1] == consumerClient)
	}, 30*time.Second, 50*time.Millisecond, "the task's consumer never joined the group")

	start := time.Now()
	w.StopTasks([]state.TaskID{id})
	took := time.Since(start)

	st, members := blocker.describe(t)
	require.Equal(t, "PreparingRebalance", st, "the stop waited for the group's join to complete (stop took %v)", took)
	require.NotContains(t, members, consumerClient, "the stopped task's consumer is still a member of %s", group)
	require.Equal(t, []state.State{state.Running, state.Unassigned}, states.of(id))
	require.Zero(t, sink.Count())
	require.Empty(t, kafkatest.CommittedOffsets(t, addr, group, topic))
	return took
}

// BenchmarkStopSinkTaskInGroupJoin: how long stopping a sink task takes while its consumer waits in a group
// join that another member holds for a minute (the scenario of TestStopSinkTaskInGroupJoin).
//
//	scripts/with-kafka.sh go test -run '^$' -bench StopSinkTaskInGroupJoin -benchtime 10x ./internal/worker/
func BenchmarkStopSinkTaskInGroupJoin(b *testing.B) {
	addr := kafkatest.Bootstrap(b)
	var total, worst time.Duration
	n := 0
	for range b.N {
		took := stopInGroupJoin(b, addr)
		total += took
		worst = max(worst, took)
		n++
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(n), "stop_ms")
	b.ReportMetric(float64(worst.Microseconds())/1000, "max_stop_ms")
	b.ReportMetric(0, "ns/op")
}

// TestStopRunningSinkTaskCommits: a task that runs normally makes its final commit when stopped (the
// periodic commit is far away), so the committed offsets are exactly what was put.
func TestStopRunningSinkTaskCommits(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "in")
	kafkatest.CreateTopic(t, addr, topic, 2, nil)
	const n = 40
	var msgs []*kgo.Record
	for i := 0; i < n; i++ {
		msgs = append(msgs, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint(i))})
	}
	kafkatest.Produce(t, addr, topic, msgs...)
	connName := kafkatest.UniqueName(t, "conn")

	w, id, states, sink := startSinkTask(t, addr, topic, connName, time.Hour)
	require.Eventually(t, func() bool { return sink.Count() == n }, 60*time.Second, 20*time.Millisecond)
	w.StopTasks([]state.TaskID{id})

	want := map[int32]int64{}
	for _, r := range sink.Records() {
		want[r.Partition] = max(want[r.Partition], r.Offset+1)
	}
	require.Equal(t, want, kafkatest.CommittedOffsets(t, addr, "connect-"+connName, topic))
	require.Equal(t, []state.State{state.Running, state.Unassigned}, states.of(id))
}
