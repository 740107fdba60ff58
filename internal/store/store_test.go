package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

func bootstrap(t *testing.T) string { return kafkatest.Bootstrap(t) }

func clientProps(addr string) map[string]string { return map[string]string{"bootstrap.servers": addr} }

func admin(t *testing.T, addr string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// createTopic creates a topic as an operator would, outside the stores.
func createTopic(t *testing.T, cl *kgo.Client, name string, partitions int32, configs map[string]*string) {
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), partitions, 1, configs, name)
	require.NoError(t, err)
	require.NoError(t, resp.Err)
}

func uniq(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }

func TestEnsureTopic(t *testing.T) {
	addr := bootstrap(t)
	ad := admin(t, addr)
	name := uniq("connect-configs")
	spec := TopicSpec{Name: name, Property: "config.storage.topic", Partitions: 1, Replication: 1, SinglePartition: true,
		Configs: map[string]string{"cleanup.policy": "delete", "min.insync.replicas": "1"}}
	require.NoError(t, EnsureTopic(context.Background(), ad, spec))
	policy, err := topicConfig(context.Background(), kadm.NewClient(ad), name, "cleanup.policy")
	require.NoError(t, err)
	require.Equal(t, "compact", policy, "a cleanup.policy given through config.storage.* is ignored")
	require.NoError(t, EnsureTopic(context.Background(), ad, spec), "existing compacted topic accepted")

	del := "delete"
	bad := uniq("connect-status-bad")
	createTopic(t, ad, bad, 1, map[string]*string{"cleanup.policy": &del})
	err = EnsureTopic(context.Background(), ad, TopicSpec{Name: bad, Property: "status.storage.topic", Partitions: 5, Replication: 1})
	require.ErrorContains(t, err, "is required to have 'cleanup.policy=compact'")
	require.ErrorContains(t, err, "'cleanup.policy=delete'")

	two := uniq("connect-configs-2p")
	compact := "compact"
	createTopic(t, ad, two, 2, map[string]*string{"cleanup.policy": &compact})
	err = EnsureTopic(context.Background(), ad, TopicSpec{Name: two, Property: "config.storage.topic", Partitions: 1, Replication: 1, SinglePartition: true})
	require.ErrorContains(t, err, "required to have a single partition")

	status := uniq("connect-status")
	require.NoError(t, EnsureTopic(context.Background(), ad, TopicSpec{Name: status, Property: "status.storage.topic", Partitions: 5, Replication: 1}))
	md, err := kadm.NewClient(ad).ListTopics(context.Background(), status)
	require.NoError(t, err)
	require.Len(t, md[status].Partitions, 5)
}

type recListener struct {
	mu       sync.Mutex
	events   []string
	restarts []RestartRequest
}

func (l *recListener) add(s string) { l.mu.Lock(); l.events = append(l.events, s); l.mu.Unlock() }
func (l *recListener) ConnectorConfigUpdated(n string, removed bool) {
	l.add(fmt.Sprintf("connector %s removed=%v", n, removed))
}
func (l *recListener) TaskConfigsUpdated(n string, c int) { l.add(fmt.Sprintf("tasks %s %d", n, c)) }
func (l *recListener) TargetStateChanged(n string)        { l.add("target " + n) }
func (l *recListener) RestartRequested(r RestartRequest) {
	l.mu.Lock()
	l.restarts = append(l.restarts, r)
	l.mu.Unlock()
}
func (l *recListener) SessionKeyUpdated(SessionKey) { l.add("session-key") }

func openConfig(t *testing.T, addr, topic string, l ConfigListener) (*ConfigStore, *Log) {
	s := NewConfigStore(l)
	lg, err := NewLog(clientProps(addr), topic, s.Apply)
	require.NoError(t, err)
	s.SetLog(lg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, lg.Start(ctx))
	s.MarkStarted()
	t.Cleanup(func() { lg.Close() })
	return s, lg
}

func TestConfigStoreRoundTrip(t *testing.T) {
	addr := bootstrap(t)
	topic := uniq("connect-configs")
	require.NoError(t, EnsureTopic(context.Background(), admin(t, addr), TopicSpec{Name: topic, Property: "config.storage.topic", Partitions: 1, Replication: 1, SinglePartition: true}))
	l := &recListener{}
	s, lg := openConfig(t, addr, topic, l)
	require.Equal(t, int64(-1), s.Offset())

	props := map[string]string{"connector.class": "FileStreamSink", "tasks.max": "2", "topics": "t"}
	require.NoError(t, s.PutConnectorConfig("c1", props, state.Paused))
	require.NoError(t, s.PutTaskConfigs(context.Background(), "c1", []map[string]string{{"task.class": "X", "i": "0"}, {"task.class": "X", "i": "1"}}))
	require.NoError(t, s.PutTargetState("c1", state.Stopped))
	require.NoError(t, s.PutSessionKey(SessionKey{Key: []byte("0123456789abcdef"), Algorithm: "HmacSHA256", Created: time.UnixMilli(1700000000000)}))
	require.NoError(t, s.PutConnectorConfig("c2", props, ""))
	// uncommitted task configs for c2 must not become visible
	_, _, err := lg.Send("task-c2-0", []byte(`{"properties":{"a":"b"}}`))
	require.NoError(t, err)
	require.NoError(t, s.PutRestartRequest(RestartRequest{Connector: "c1", IncludeTasks: true}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, lg.ReadToEnd(ctx))

	snap := s.Snapshot()
	require.Equal(t, int64(10), snap.Offset)
	require.Equal(t, []string{"c1", "c2"}, snap.ConnectorNames())
	require.Equal(t, state.Stopped, snap.TargetState("c1"))
	require.Equal(t, state.Started, snap.TargetState("c2"))
	require.Equal(t, 2, snap.TaskCounts["c1"])
	require.Equal(t, "1", snap.Tasks("c1")[1]["i"])
	require.Zero(t, snap.TaskCounts["c2"])
	require.Equal(t, []byte("0123456789abcdef"), snap.SessionKey.Key)
	l.mu.Lock()
	require.Equal(t, []RestartRequest{{Connector: "c1", IncludeTasks: true}}, l.restarts)
	l.mu.Unlock()

	// the exact JVM values on the wire
	raw := readAll(t, addr, topic)
	require.Equal(t, `{"state":"PAUSED","state.v2":"PAUSED"}`, raw[0][1])
	require.Equal(t, "target-state-c1", raw[0][0])
	require.Equal(t, "connector-c1", raw[1][0])
	require.Equal(t, `{"properties":{"connector.class":"FileStreamSink","tasks.max":"2","topics":"t"}}`, raw[1][1])
	require.Equal(t, "task-c1-0", raw[2][0])
	require.Equal(t, "commit-c1", raw[4][0])
	require.Equal(t, `{"tasks":2}`, raw[4][1])
	require.Equal(t, `{"state":"PAUSED","state.v2":"STOPPED"}`, raw[5][1])
	require.Equal(t, `{"key":"MDEyMzQ1Njc4OWFiY2RlZg==","algorithm":"HmacSHA256","creation-timestamp":1700000000000}`, raw[6][1])
	require.Equal(t, `{"include-tasks":true,"only-failed":false}`, raw[9][1])

	// a second reader replays the same state and ignores the old restart request
	l2 := &recListener{}
	s2, _ := openConfig(t, addr, topic, l2)
	require.Equal(t, snap, s2.Snapshot())
	require.Empty(t, l2.restarts)

	// delete: tombstones for connector and target state
	require.NoError(t, s.RemoveConnectorConfig("c1"))
	require.NoError(t, lg.ReadToEnd(ctx))
	require.Equal(t, []string{"c2"}, s.Snapshot().ConnectorNames())
	require.Equal(t, state.Started, s.Snapshot().TargetState("c1"))
}

func readAll(t *testing.T, addr, topic string) [][2]string {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	require.NoError(t, err)
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	require.NoError(t, err)
	end, _ := ends.Lookup(topic, 0)
	require.NoError(t, end.Err)
	var out [][2]string
	for int64(len(out)) < end.Offset {
		cl.PollFetches(context.Background()).EachRecord(func(m *kgo.Record) {
			out = append(out, [2]string{string(m.Key), string(m.Value)})
		})
	}
	return out
}

func TestStatusStore(t *testing.T) {
	addr := bootstrap(t)
	topic := uniq("connect-status")
	require.NoError(t, EnsureTopic(context.Background(), admin(t, addr), TopicSpec{Name: topic, Property: "status.storage.topic", Partitions: 5, Replication: 1}))
	open := func() (*StatusStore, *Log) {
		s := NewStatusStore()
		lg, err := NewLog(clientProps(addr), topic, s.Apply)
		require.NoError(t, err)
		s.SetLog(lg)
		require.NoError(t, lg.Start(context.Background()))
		t.Cleanup(func() { lg.Close() })
		return s, lg
	}
	s, _ := open()
	id := state.TaskID{Connector: "c", Task: 0}
	require.NoError(t, s.PutConnector("c", Status{State: state.Running, WorkerID: "a:8083", Generation: 5}, true))
	require.NoError(t, s.PutTask(id, Status{State: state.Running, WorkerID: "a:8083", Generation: 5}, true))
	// an older generation from another worker is not written by a safe write
	require.NoError(t, s.PutTask(id, Status{State: state.Unassigned, WorkerID: "b:8083", Generation: 4}, true))
	require.Equal(t, "a:8083", s.Task(id).WorkerID)
	// a newer one is
	tr := "boom"
	require.NoError(t, s.PutTask(id, Status{State: state.Failed, Trace: &tr, WorkerID: "b:8083", Generation: 6}, true))
	require.NoError(t, s.PutTopic("c", "orders", 0, time.UnixMilli(1)))
	require.NoError(t, s.PutTask(state.TaskID{Connector: "c", Task: 1}, Status{State: state.Destroyed, WorkerID: "b:8083", Generation: 6}, false))

	s2, lg2 := open()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, lg2.ReadToEnd(ctx))
	require.Equal(t, state.Failed, s2.Task(id).State)
	require.Equal(t, "boom", *s2.Task(id).Trace)
	require.Equal(t, int32(6), s2.Task(id).Generation)
	require.Equal(t, state.Running, s2.Connector("c").State)
	require.Equal(t, []string{"orders"}, s2.Topics("c"))
	require.Nil(t, s2.Task(state.TaskID{Connector: "c", Task: 1}))
	require.NoError(t, s2.DeleteTopics("c"))
	require.Empty(t, s2.Topics("c"))
}
