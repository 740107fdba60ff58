package commit

// Cross-process commits: one snapshot per table per commit round for ALL tasks of a connector,
// wherever they run (coordination "topic", the default in distributed mode).
//
// Each worker process has one orchestrator per connector over its tasks there, which buffer the
// records. Through the control topic (iceberg.control.topic, messages keyed and filtered
// by the connector's consumer group):
//
//	committer  the process whose tasks hold the connector's first topic-partition (the Apache
//	           sink's rule), every commit interval: START{round id}
//	everyone   drains its tasks and Prepares each table (reload the head, drop records below the
//	           head's offsets, plan upserts/deletes, write data and delete files), then
//	           DATA{round, assigned partitions, drained positions, per table: base snapshot +
//	           the files in the manifest-entry Avro encoding of iceberg-go's codec package}
//	committer  waits until the DATA messages cover every partition of the connector's topics (or
//	           the commit timeout), then per table Apply(all parts): ONE snapshot, positions of
//	           the included processes merged into the summary offsets, compare-and-swap on the
//	           head the parts were planned on; then COMMIT{round, ok, included processes}
//	everyone   on COMMIT ok and included: the drained positions are durable (PreCommit may hand
//	           them to the Connect group); on anything else (failed round, excluded, no COMMIT
//	           within twice the timeout, a newer START first): the records go back to the tasks
//	           and are planned again in the next round.
//
// Why this stays exactly-once with any number of committers (a zombie, two processes briefly
// both believing they lead, a committer dying between tables): a part is committed only on the
// very head it was planned against (Apply checks Base == head, the catalog's compare-and-swap
// pins it), so a record enters a table only if its offset is at or above the head's offsets, and
// that same commit raises them past it. A process advances its group offsets only on an explicit
// COMMIT of the round it is in; in any doubt it plans the records again in a later round (at least once), and
// the table offsets skip what is already in (hence exactly once). Leadership only decides who
// does the work, never what is safe.
//
// These messages are connectd's own (JSON, framed as Apache events that an Apache sink sharing the topic
// skips), not the Apache sink's Avro events: a connector that speaks this protocol runs all of its tasks on
// connectd workers, and its tasks fail when the Apache sink's events of the connector show up (errApacheEvents).
// Under the Apache protocol (ProtocolApache, control_apache.go) one connector's tasks may run on JVM and
// connectd workers at once.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// maxControlMessage bounds one control message (a process's answer for all tables of a round);
// the control topic is created with max.message.bytes to match.
const maxControlMessage = 16 << 20

// control is the coordinator's side of the control topic (distributed coordination).
type control struct {
	*rounds
	id    string // this process: worker id + a random suffix (a restarted process is new)
	topic string

	kc     connect.KafkaClients
	props  map[string]string // the control topic clients' properties
	admin  connect.TopicAdmin
	prod   connect.Producer
	reader connect.TopicReader

	pmsgs    chan ctlMsg   // START and COMMIT, in topic order, for the participant
	datas    chan ctlMsg   // DATA and ASSIGN, for the committer
	requests chan struct{} // early round: asked by another process, or by this one (leader)
	wants    chan struct{} // this process's buffers are full (Trigger)

	ctx    context.Context // cancelled by close: stops catalog work of a round in progress
	cancel context.CancelFunc

	pwriters map[string]*icetable.Writer // the participant's writers (the committer's are c.writers)
	wg       sync.WaitGroup

	lastTrigger time.Time   // commit loop only
	leading     atomic.Bool // the last leadership check (metrics)

	// the apache protocol (control_apache.go)
	apache      bool
	workerID    string            // names the answer producer of tasks whose config names no task
	astarts     chan uuid.UUID    // START_COMMIT ids, for the participant
	answerMu    sync.Mutex        // held while answering (BeforeRevoke and TaskStopped wait for it)
	producerKey string            // the key of the committer's events
	foreign     *foreignCommitter // JVM coordinators of the connector (control_apache_standby.go)
	started     time.Time         // when this process joined the control topic

	producersMu sync.Mutex
	producers   map[string]*taskProducer // the tasks' answer producers by transactional id (control_apache_producers.go)
}

// controlRequestTimeout bounds one metadata or offsets request of the control topic's clients.
const controlRequestTimeout = 30 * time.Second

// startControl connects to the control topic (creating it when missing) and starts the reader,
// participant and committer loops of the connector's protocol.
func startControl(c *rounds, wi connect.WorkerInfo) (Orchestrator, error) {
	pr, ok := wi.(connect.PluginRuntime)
	if !ok || pr.KafkaClients() == nil {
		return nil, errors.New("control topic client: the runtime offers no Kafka clients (connect.PluginRuntime)")
	}
	kc := pr.KafkaClients()
	props := wi.WorkerKafkaProps()
	for k, v := range c.opts.KafkaProps {
		props[k] = v
	}
	if props["client.id"] == "" {
		props["client.id"] = "connectd-iceberg-control-" + c.opts.Connector
	}
	props["acks"] = "all"
	props["max.request.size"] = strconv.Itoa(maxControlMessage)
	props["compression.type"] = "lz4" // manifest entries compress well
	ctl := &control{
		rounds: c, id: wi.WorkerID() + "/" + uuid.NewString()[:8], topic: c.opts.ControlTopic, kc: kc, props: props,
		pmsgs: make(chan ctlMsg, 64), datas: make(chan ctlMsg, 256),
		requests: make(chan struct{}, 1), wants: make(chan struct{}, 1), pwriters: map[string]*icetable.Writer{},
		apache: c.opts.Protocol == ProtocolApache, workerID: wi.WorkerID(), astarts: make(chan uuid.UUID, 16), producerKey: uuid.NewString(),
		foreign: newForeignCommitter(c.opts.CommitInterval, c.opts.CommitTimeout), started: time.Now(),
		producers: map[string]*taskProducer{},
	}
	ctl.ctx, ctl.cancel = context.WithCancel(context.Background())
	fail := func(err error) (Orchestrator, error) {
		ctl.cancel()
		ctl.closeClients()
		return nil, err
	}
	var err error
	if ctl.admin, err = kc.NewTopicAdmin(props); err != nil {
		return fail(fmt.Errorf("control topic client: %w", err))
	}
	if err := ctl.ensureTopic(); err != nil {
		return fail(err)
	}
	if ctl.prod, err = kc.NewProducer(props); err != nil {
		return fail(fmt.Errorf("control topic producer: %w", err))
	}
	// under the apache protocol, START_COMMIT comes in the JVM coordinator's transactions
	if ctl.reader, err = kc.NewTopicReader(props, connect.TopicReaderSpec{Topic: ctl.topic, ReadCommitted: ctl.apache}); err != nil {
		return fail(fmt.Errorf("consume control topic %s: %w", ctl.topic, err))
	}
	ctl.wg.Add(3)
	go ctl.read()
	if ctl.apache {
		go ctl.apacheParticipate()
		go ctl.apacheCommitLoop()
	} else {
		go ctl.participate()
		go ctl.commitLoop()
	}
	c.log.Info("iceberg commits coordinated through the control topic", "topic", ctl.topic, "process", ctl.id, "protocol", c.opts.Protocol)
	if ctl.apache {
		return &apacheControl{ctl}, nil
	}
	return &connectdControl{ctl}, nil
}

// ensureTopic creates the control topic when it is missing: one partition, replicated up to three times.
func (ctl *control) ensureTopic() error {
	ctx, cancel := context.WithTimeout(ctl.ctx, controlRequestTimeout)
	defer cancel()
	md, err := ctl.admin.Metadata(ctx, ctl.topic)
	if err != nil {
		return fmt.Errorf("control topic %s: %w", ctl.topic, err)
	}
	if len(md.Partitions[ctl.topic]) > 0 {
		return nil
	}
	spec := connect.TopicSpec{Name: ctl.topic, Partitions: 1, ReplicationFactor: int16(max(1, min(3, md.Brokers))),
		Configs: map[string]string{"max.message.bytes": strconv.Itoa(maxControlMessage)}}
	if err := ctl.admin.EnsureTopic(ctx, spec); err != nil {
		return fmt.Errorf("create control topic %s: %w", ctl.topic, err)
	}
	for { // until the brokers' metadata has it, which the reader's start needs
		if md, err := ctl.admin.Metadata(ctx, ctl.topic); err == nil && len(md.Partitions[ctl.topic]) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("control topic %s: created, but not in the metadata: %w", ctl.topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the loops and closes the clients.
func (ctl *control) Close() {
	close(ctl.stop)
	ctl.cancel()
	ctl.wg.Wait()
	ctl.closeClients()
}

func (ctl *control) closeClients() {
	if ctl.reader != nil {
		ctl.reader.Close()
	}
	if ctl.prod != nil {
		ctl.prod.Close()
	}
	ctl.closeProducers()
	if ctl.admin != nil {
		ctl.admin.Close()
	}
}

func (ctl *control) send(m ctlMsg) error {
	m.Group, m.From = ctl.opts.GroupID, ctl.id
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if b, err = frameConnectd(m.Group, b); err != nil {
		return err
	}
	err = ctl.prod.Produce(ctl.ctx, &connect.ProducerRecord{Topic: ctl.topic, Partition: connect.AnyPartition, Key: []byte(m.Group), Value: b})
	if err != nil {
		return fmt.Errorf("send %s to control topic: %w", m.Type, err)
	}
	return nil
}

// read dispatches control messages of this connector. A full channel drops the message: every
// loss only makes a round fail or miss a process, which is safe (see the top of the file).
func (ctl *control) read() {
	defer ctl.wg.Done()
	ctx, cancel := context.WithCancel(ctl.ctx)
	defer cancel()
	go func() {
		select {
		case <-ctl.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		recs, err := ctl.reader.Poll(ctx)
		if err != nil {
			return
		}
		for _, rec := range recs {
			if ctl.apache {
				ctl.readApache(rec.Value)
				continue
			}
			b, apache := connectdPayload(rec.Value, ctl.opts.GroupID)
			if apache {
				ctl.tasks.Fail(errApacheEvents(ctl.opts.ControlTopic, ctl.opts.GroupID, ctl.opts.ProtocolKey))
				continue
			}
			var m ctlMsg
			if b == nil || json.Unmarshal(b, &m) != nil || m.Group != ctl.opts.GroupID {
				continue
			}
			var ch chan ctlMsg
			switch m.Type {
			case ctlStart, ctlCommit:
				ch = ctl.pmsgs // one channel: a COMMIT is never handled after the next START
			case ctlData, ctlAssign:
				ch = ctl.datas
			case ctlRequest:
				select {
				case ctl.requests <- struct{}{}:
				default:
				}
				continue
			default:
				continue
			}
			select {
			case ch <- m:
			default:
				ctl.log.Warn("control message dropped (channel full)", "type", m.Type, "round", m.Round)
			}
		}
	}
}

// CommitNow runs one round of this process's tasks alone, outside the protocol (tests, benchmarks).
func (ctl *control) CommitNow(ctx context.Context) bool {
	return (&Local{rounds: ctl.rounds}).commitRound(ctx, ctl.tasks)
}

// afterRound runs AfterRound on the commit loop, after a round this process committed.
func (ctl *control) afterRound() {
	if ctl.opts.AfterRound != nil {
		ctl.opts.AfterRound(ctl.ctx)
	}
}

func (ctl *control) Committer() (bool, bool) { return true, ctl.leading.Load() }

// connectdControl: connectd's control protocol (the top of this file). Partitions move without waiting: an
// answer's positions count only on the committer's COMMIT, and the next owner re-reads from the group offsets.
type connectdControl struct{ *control }

// TaskStarted keeps nothing per task: this protocol answers without transactions.
func (ctl *connectdControl) TaskStarted(TaskConfig) (TaskKey, error) { return TaskKey{}, nil }

func (ctl *connectdControl) TaskStopped(TaskKey) {}

func (ctl *connectdControl) BeforeRevoke() {}

// LastTaskStopping does nothing: the partitions' next owner re-reads past the group offsets.
func (ctl *connectdControl) LastTaskStopping(Tasks) {}

func (ctl *connectdControl) StuckReason(lastRoundFailed bool) string {
	_, leads := ctl.Committer()
	return ctl.stuckReason(lastRoundFailed, true, leads, false)
}

// apacheControl: the Apache sink's control protocol (control_apache.go).
type apacheControl struct{ *control }

// TaskStarted connects the task's answer producer, which ends the transaction its previous holder left open,
// and ends those of the JVM task's coordinator (control_apache_producers.go).
func (ctl *apacheControl) TaskStarted(task TaskConfig) (TaskKey, error) {
	return ctl.startTaskProducer(task)
}

// TaskStopped closes the task's answer producer once no answer uses it.
func (ctl *apacheControl) TaskStopped(key TaskKey) { ctl.stopTaskProducer(key) }

// BeforeRevoke waits for an answer in progress, whose transaction commits the partitions' offsets.
func (ctl *apacheControl) BeforeRevoke() { ctl.awaitApacheAnswer() }

func (ctl *apacheControl) LastTaskStopping(Tasks) {}

func (ctl *apacheControl) StuckReason(lastRoundFailed bool) string {
	_, leads := ctl.Committer()
	return ctl.stuckReason(lastRoundFailed, true, leads, ctl.foreign.active(time.Now()))
}

var (
	_ Orchestrator = (*connectdControl)(nil)
	_ Orchestrator = (*apacheControl)(nil)
)
