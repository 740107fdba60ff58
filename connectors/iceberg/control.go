package iceberg

// Cross-process commits: one snapshot per table per commit round for ALL tasks of a connector,
// wherever they run (coordination "topic", the default in distributed mode).
//
// Each worker process has one coordinator per connector (coordinator.go) that buffers its
// tasks' records. Through the control topic (iceberg.control.topic, messages keyed and filtered
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
// The message format is this project's (JSON), not the Apache sink's Avro events: a connector cannot run
// its tasks on both (control_apache.go fails them when the Apache sink's events of the connector show up).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// maxControlMessage bounds one control message (a process's answer for all tables of a round);
// the control topic is created with max.message.bytes to match.
const maxControlMessage = 16 << 20

// control is the coordinator's side of the control topic (distributed coordination).
type control struct {
	c     *coordinator
	id    string // this process: worker id + a random suffix (a restarted process is new)
	topic string

	client sarama.Client
	prod   sarama.SyncProducer
	cons   sarama.Consumer
	topics *regexp.Regexp // topics.regex, when set

	pmsgs    chan ctlMsg   // START and COMMIT, in topic order, for the participant
	datas    chan ctlMsg   // DATA and ASSIGN, for the committer
	requests chan struct{} // early round: asked by another process, or by this one (leader)
	wants    chan struct{} // this process's buffers are full (Task.Put → triggerRound)

	ctx    context.Context // cancelled by close: stops catalog work of a round in progress
	cancel context.CancelFunc

	pwriters map[string]*icetable.Writer // the participant's writers (the committer's are c.writers)
	wg       sync.WaitGroup

	lastTrigger time.Time   // commit loop only
	leading     atomic.Bool // the last leadership check (metrics)

	// the apache protocol (control_apache.go)
	apache      bool
	txn         sarama.SyncProducer // transactional: answers with their source offsets
	ccons       sarama.Consumer     // the committer's reads (read_committed)
	astarts     chan uuid.UUID      // START_COMMIT ids, for the participant
	answerMu    sync.Mutex          // held while answering (Task.Close waits for it)
	producerKey string              // the key of this process's events
	brokers     []string
	scfg        *sarama.Config
	foreign     *foreignCommitter // JVM coordinators of the connector (control_apache_standby.go)
	started     time.Time         // when this process joined the control topic
}

// startControl connects to the control topic (creating it when missing) and starts the reader,
// participant and committer loops.
func startControl(c *coordinator, wi connect.WorkerInfo) (*control, error) {
	pr, ok := wi.(connect.PluginRuntime)
	if !ok || pr.KafkaClients() == nil {
		return nil, errors.New("control topic client: the runtime offers no Kafka clients (connect.PluginRuntime)")
	}
	kc := pr.KafkaClients()
	props := wi.WorkerKafkaProps()
	for k, v := range c.cfg.KafkaProps {
		props[k] = v
	}
	if props["client.id"] == "" {
		props["client.id"] = "connectd-iceberg-control-" + c.cfg.Name
	}
	scfg, err := kc.Config(props)
	if err != nil {
		return nil, fmt.Errorf("control topic client: %w", err)
	}
	scfg.Producer.Return.Successes = true
	scfg.Producer.RequiredAcks = sarama.WaitForAll
	scfg.Producer.MaxMessageBytes = maxControlMessage
	scfg.Producer.Compression = sarama.CompressionLZ4 // manifest entries compress well
	scfg.Consumer.Return.Errors = false
	brokers := kc.Brokers(props)
	client, err := kc.NewClient(brokers, scfg)
	if err != nil {
		return nil, fmt.Errorf("control topic client: %w", err)
	}
	ctl := &control{
		c: c, id: wi.WorkerID() + "/" + uuid.NewString()[:8], topic: c.cfg.ControlTopic, client: client,
		pmsgs: make(chan ctlMsg, 64), datas: make(chan ctlMsg, 256),
		requests: make(chan struct{}, 1), wants: make(chan struct{}, 1), pwriters: map[string]*icetable.Writer{},
		apache: c.cfg.ControlProtocol == ProtocolApache, astarts: make(chan uuid.UUID, 16), producerKey: uuid.NewString(),
		foreign: newForeignCommitter(c.cfg), started: time.Now(),
	}
	ctl.ctx, ctl.cancel = context.WithCancel(context.Background())
	if c.cfg.TopicsRegex != "" {
		if ctl.topics, err = regexp.Compile(c.cfg.TopicsRegex); err != nil {
			client.Close()
			return nil, err
		}
	}
	fail := func(err error) (*control, error) {
		ctl.cancel()
		if ctl.prod != nil {
			_ = ctl.prod.Close()
		}
		if ctl.cons != nil {
			_ = ctl.cons.Close()
		}
		if ctl.txn != nil {
			_ = ctl.txn.Close()
		}
		if ctl.ccons != nil {
			_ = ctl.ccons.Close()
		}
		client.Close()
		return nil, err
	}
	if err := ctl.ensureTopic(); err != nil {
		return fail(err)
	}
	// own connections for the producer and the consumer: on a shared sarama client a fetch
	// long-poll holds the broker connection and starves the producer
	if ctl.prod, err = sarama.NewSyncProducer(brokers, scfg); err != nil {
		return fail(fmt.Errorf("control topic producer: %w", err))
	}
	if ctl.apache {
		// the committer must not see the files of an aborted answer
		scfg.Consumer.IsolationLevel = sarama.ReadCommitted
		if ctl.ccons, err = sarama.NewConsumer(brokers, scfg); err != nil {
			return fail(fmt.Errorf("control topic consumer: %w", err))
		}
		ctl.brokers, ctl.scfg = brokers, scfg
		if ctl.txn, err = sarama.NewSyncProducer(brokers, txnConfig(scfg, ctl.transactionalID(wi.WorkerID()))); err != nil {
			return fail(fmt.Errorf("control topic transactional producer: %w", err))
		}
	}
	if ctl.cons, err = sarama.NewConsumer(brokers, scfg); err != nil {
		return fail(fmt.Errorf("control topic consumer: %w", err))
	}
	parts, err := client.Partitions(ctl.topic)
	if err != nil {
		return fail(err)
	}
	var pcs []sarama.PartitionConsumer
	for _, p := range parts {
		pc, err := ctl.cons.ConsumePartition(ctl.topic, p, sarama.OffsetNewest)
		if err != nil {
			for _, pc := range pcs {
				_ = pc.Close()
			}
			return fail(fmt.Errorf("consume control topic %s: %w", ctl.topic, err))
		}
		pcs = append(pcs, pc)
	}
	for _, pc := range pcs {
		ctl.wg.Add(1)
		go ctl.read(pc)
	}
	ctl.wg.Add(2)
	if ctl.apache {
		go ctl.apacheParticipate()
		go ctl.apacheCommitLoop()
	} else {
		go ctl.participate()
		go ctl.commitLoop()
	}
	c.log.Info("iceberg commits coordinated through the control topic", "topic", ctl.topic, "process", ctl.id, "protocol", c.cfg.ControlProtocol)
	return ctl, nil
}

func (ctl *control) ensureTopic() error {
	if parts, err := ctl.client.Partitions(ctl.topic); err == nil && len(parts) > 0 {
		return nil
	}
	admin, err := sarama.NewClusterAdminFromClient(ctl.client)
	if err != nil {
		return err
	}
	rf := int16(min(3, len(ctl.client.Brokers())))
	maxBytes := strconv.Itoa(maxControlMessage)
	err = admin.CreateTopic(ctl.topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: rf,
		ConfigEntries: map[string]*string{"max.message.bytes": &maxBytes}}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return fmt.Errorf("create control topic %s: %w", ctl.topic, err)
	}
	return ctl.client.RefreshMetadata(ctl.topic)
}

// close waits for the loops (the coordinator's stop channel is closed first) and closes the
// clients.
func (ctl *control) close() {
	ctl.cancel()
	ctl.wg.Wait()
	_ = ctl.cons.Close()
	_ = ctl.prod.Close()
	if ctl.txn != nil {
		_ = ctl.txn.Close()
		_ = ctl.ccons.Close()
	}
	_ = ctl.client.Close()
}

func (ctl *control) send(m ctlMsg) error {
	m.Group, m.From = ctl.c.cfg.GroupID, ctl.id
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if b, err = frameConnectd(m.Group, b); err != nil {
		return err
	}
	_, _, err = ctl.prod.SendMessage(&sarama.ProducerMessage{Topic: ctl.topic, Key: sarama.StringEncoder(m.Group), Value: sarama.ByteEncoder(b)})
	if err != nil {
		return fmt.Errorf("send %s to control topic: %w", m.Type, err)
	}
	return nil
}

// read dispatches control messages of this connector. A full channel drops the message: every
// loss only makes a round fail or miss a process, which is safe (see the top of the file).
func (ctl *control) read(pc sarama.PartitionConsumer) {
	defer ctl.wg.Done()
	defer pc.Close()
	for {
		select {
		case <-ctl.c.stop:
			return
		case km, ok := <-pc.Messages():
			if !ok {
				return
			}
			if ctl.apache {
				ctl.readApache(km.Value)
				continue
			}
			b, apache := connectdPayload(km.Value, ctl.c.cfg.GroupID)
			if apache {
				ctl.c.fail(errApacheEvents(ctl.c.cfg.ControlTopic, ctl.c.cfg.GroupID))
				continue
			}
			var m ctlMsg
			if b == nil || json.Unmarshal(b, &m) != nil || m.Group != ctl.c.cfg.GroupID {
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
				ctl.c.log.Warn("control message dropped (channel full)", "type", m.Type, "round", m.Round)
			}
		}
	}
}
