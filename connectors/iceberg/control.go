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
// The message format is this project's (JSON), not the Apache sink's Avro events: do not share a
// control topic between this sink and the JVM one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/codec"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
)

// SummaryContributors is the snapshot summary property holding how many worker processes wrote
// the files of that snapshot.
const SummaryContributors = "connectd.commit.contributors"

const (
	ctlStart   = "start"
	ctlData    = "data"   // a process's answer: its files and drained positions (once per round)
	ctlAssign  = "assign" // a repeated answer: only the partitions held now (coverage, never included)
	ctlCommit  = "commit"
	ctlRequest = "request" // a process whose buffers are full asks for an early round
)

type ctlTP struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset,omitempty"`
}

// ctlFile is one data or delete file in the manifest-entry Avro encoding of its spec.
type ctlFile struct {
	Spec  int    `json:"spec"`
	Entry []byte `json:"entry"`
}

type ctlTable struct {
	Name     string      `json:"name"`
	Base     int64       `json:"base"`
	SchemaID int         `json:"schemaId"`
	Data     []ctlFile   `json:"data,omitempty"`
	Deletes  []ctlFile   `json:"deletes,omitempty"`
	Stats    CommitStats `json:"stats"`
	Tomb     *ctlTable   `json:"tombstones,omitempty"`
}

type ctlMsg struct {
	Type     string     `json:"type"`
	Group    string     `json:"group"`
	Round    string     `json:"round,omitempty"`
	From     string     `json:"from"`
	Assigned []ctlTP    `json:"assigned,omitempty"`
	Offsets  []ctlTP    `json:"offsets,omitempty"`
	Tables   []ctlTable `json:"tables,omitempty"`
	Error    string     `json:"error,omitempty"`
	OK       bool       `json:"ok,omitempty"`
	Included []string   `json:"included,omitempty"`
}

// encodePart turns a prepared part into its control-topic form.
func encodePart(name string, tbl *table.Table, p *Part) (ctlTable, error) {
	ct := ctlTable{Name: name, Base: p.Base, SchemaID: p.SchemaID, Stats: p.Stats}
	if !p.Files() {
		return ct, nil
	}
	md := tbl.Metadata()
	sc := schemaByID(md, p.SchemaID)
	if sc == nil {
		return ct, fmt.Errorf("table %s: schema %d not in metadata", name, p.SchemaID)
	}
	enc := func(files []ice.DataFile) ([]ctlFile, error) {
		out := make([]ctlFile, 0, len(files))
		for _, df := range files {
			spec := md.PartitionSpecByID(int(df.SpecID()))
			if spec == nil {
				return nil, fmt.Errorf("table %s: partition spec %d not in metadata", name, df.SpecID())
			}
			b, err := codec.EncodeDataFile(df, *spec, sc, md.Version())
			if err != nil {
				return nil, fmt.Errorf("table %s: encode %s: %w", name, df.FilePath(), err)
			}
			out = append(out, ctlFile{Spec: int(df.SpecID()), Entry: b})
		}
		return out, nil
	}
	var err error
	if ct.Data, err = enc(p.Data); err != nil {
		return ct, err
	}
	ct.Deletes, err = enc(p.Deletes)
	return ct, err
}

// decodePart is the inverse of encodePart against the committer's copy of the table metadata
// (schemas and specs are only ever added, so the ids the part names are there).
func decodePart(tbl *table.Table, ct ctlTable) (*Part, error) {
	p := &Part{Base: ct.Base, SchemaID: ct.SchemaID, Stats: ct.Stats}
	if len(ct.Data)+len(ct.Deletes) == 0 {
		return p, nil
	}
	md := tbl.Metadata()
	sc := schemaByID(md, ct.SchemaID)
	if sc == nil {
		return nil, fmt.Errorf("%w: schema %d not in the committer's metadata", ErrFenced, ct.SchemaID)
	}
	dec := func(fs []ctlFile) ([]ice.DataFile, error) {
		out := make([]ice.DataFile, 0, len(fs))
		for _, f := range fs {
			spec := md.PartitionSpecByID(f.Spec)
			if spec == nil {
				return nil, fmt.Errorf("%w: partition spec %d not in the committer's metadata", ErrFenced, f.Spec)
			}
			df, err := codec.DecodeDataFile(f.Entry, *spec, sc, md.Version())
			if err != nil {
				return nil, fmt.Errorf("decode data file: %w", err)
			}
			out = append(out, df)
		}
		return out, nil
	}
	var err error
	if p.Data, err = dec(ct.Data); err != nil {
		return nil, err
	}
	if p.Deletes, err = dec(ct.Deletes); err != nil {
		return nil, err
	}
	return p, nil
}

func schemaByID(md table.Metadata, id int) *ice.Schema {
	for _, s := range md.Schemas() {
		if s.ID == id {
			return s
		}
	}
	return nil
}

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

	pwriters map[string]*Writer // the participant's writers (the committer's are c.writers)
	wg       sync.WaitGroup

	lastTrigger time.Time   // commit loop only
	leading     atomic.Bool // the last leadership check (metrics)
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
		requests: make(chan struct{}, 1), wants: make(chan struct{}, 1), pwriters: map[string]*Writer{},
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
	go ctl.participate()
	go ctl.commitLoop()
	c.log.Info("iceberg commits coordinated through the control topic", "topic", ctl.topic, "process", ctl.id)
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
	_ = ctl.client.Close()
}

func (ctl *control) send(m ctlMsg) error {
	m.Group, m.From = ctl.c.cfg.GroupID, ctl.id
	b, err := json.Marshal(m)
	if err != nil {
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
			var m ctlMsg
			if err := json.Unmarshal(km.Value, &m); err != nil || m.Group != ctl.c.cfg.GroupID {
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

// ---- participant ----

type pendingRound struct {
	id       string
	ds       []drained
	deadline time.Time
}

func (ctl *control) participate() {
	defer ctl.wg.Done()
	c := ctl.c
	var pending *pendingRound
	var last string // the last round answered
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			if pending != nil {
				ctl.resolve(pending, false)
			}
			return
		case m := <-ctl.pmsgs:
			if m.Type == ctlCommit {
				if pending != nil && m.Round == pending.id {
					ctl.resolve(pending, m.OK && slices.Contains(m.Included, ctl.id))
					pending = nil
				}
				continue
			}
			if m.Round == last {
				// the committer repeats START while it waits: tell it the partitions we hold now
				// (a rebalance after our answer), so that it need not wait for the timeout
				if pending != nil {
					ctl.sendAssignment(m.Round)
				}
				continue
			}
			if pending != nil {
				ctl.resolve(pending, false) // a newer round started: ours may never be committed
			}
			last = m.Round
			pending = ctl.prepare(m)
		case <-tick.C:
			if pending != nil && time.Now().After(pending.deadline) {
				c.log.Warn("no commit for the round; its records are retried in the next round", "round", pending.id)
				ctl.resolve(pending, false)
				pending = nil
			}
		}
	}
}

// sendAssignment answers a repeated START with the partitions this process's tasks hold now
// and nothing else: no files, no positions (what was not drained goes in a later round).
func (ctl *control) sendAssignment(round string) {
	c := ctl.c
	tasks := c.taskList()
	msg := ctlMsg{Type: ctlAssign, Round: round}
	for _, t := range tasks {
		for _, tp := range t.assignment() {
			msg.Assigned = append(msg.Assigned, ctlTP{Topic: tp.Topic, Partition: tp.Partition})
		}
	}
	if err := ctl.send(msg); err != nil {
		c.log.Warn("iceberg round: cannot update the committer", "round", round, "err", err)
	}
}

// resolve ends a round for this process's tasks.
func (ctl *control) resolve(p *pendingRound, ok bool) {
	for _, d := range p.ds {
		if ok {
			d.t.roundCommitted(d)
		} else {
			d.t.roundFailed(d)
		}
	}
	ctl.c.roundEnded(ok)
}

func (ctl *control) pwriter(cat catalog.Catalog, name string) *Writer {
	w, ok := ctl.pwriters[name]
	if !ok {
		w = &Writer{Cat: cat, Ident: catalog.ToIdentifier(name), Opts: ctl.c.cfg.TableOptions(name)}
		ctl.pwriters[name] = w
	}
	return w
}

// prepare drains the tasks, writes this process's files for the round and sends DATA.
func (ctl *control) prepare(start ctlMsg) *pendingRound {
	c := ctl.c
	ctx := ctl.ctx
	tasks := c.taskList()
	p := &pendingRound{id: start.Round, deadline: time.Now().Add(2*commitTimeout(c.cfg) + c.cfg.CommitTimeout)}
	perTable := map[string][]Rec{}
	positions := Offsets{}
	msg := ctlMsg{Type: ctlData, Round: start.Round}
	for _, t := range tasks {
		d, assigned := t.drainAssigned()
		p.ds = append(p.ds, d)
		bufs, pos := d.bufs, d.pos
		for name, recs := range bufs {
			perTable[name] = append(perTable[name], recs...)
		}
		for tp, o := range pos {
			positions[tp] = max(positions[tp], o)
		}
		for _, tp := range assigned {
			msg.Assigned = append(msg.Assigned, ctlTP{Topic: tp.Topic, Partition: tp.Partition})
		}
	}
	for _, tp := range sortedTPs(positions) {
		msg.Offsets = append(msg.Offsets, ctlTP{Topic: tp.Topic, Partition: tp.Partition, Offset: positions[tp]})
	}
	tables, err := ctl.prepareTables(ctx, perTable)
	if err != nil {
		msg.Error = err.Error()
		c.mu.Lock()
		c.counts.LastError = err.Error()
		c.mu.Unlock()
		c.log.Warn("iceberg round: preparing files failed; its records are retried in the next round", "round", start.Round, "err", err)
	}
	msg.Tables = tables
	if err := ctl.send(msg); err != nil {
		c.log.Warn("iceberg round: cannot answer the committer; its records are retried in the next round", "round", start.Round, "err", err)
		ctl.resolve(p, false)
		return nil
	}
	if msg.Error != "" {
		ctl.resolve(p, false)
		return nil
	}
	return p
}

func (ctl *control) prepareTables(ctx context.Context, perTable map[string][]Rec) ([]ctlTable, error) {
	c := ctl.c
	if len(perTable) == 0 {
		return nil, nil
	}
	cat, err := c.catalog(ctx)
	if err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	names := make([]string, 0, len(perTable))
	for n := range perTable {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]ctlTable, len(names))
	skip := make([]bool, len(names))
	ws := make([]*Writer, len(names)) // the writer maps are not for concurrent use
	for i, name := range names {
		ws[i] = ctl.pwriter(cat, name)
		ws[i].Tbl = nil // another process commits: plan on the current head
	}
	err = parallel(len(names), c.cfg.CommitThreads, func(i int) error {
		name, recs, w := names[i], perTable[names[i]], ws[i]
		cctx, cancel := context.WithTimeout(ctx, commitTimeout(c.cfg))
		defer cancel()
		part, err := w.Prepare(cctx, recs)
		if err == nil {
			out[i], err = encodePart(name, w.Tbl, part)
			if err == nil && part.Tombstones != nil {
				var tt ctlTable
				tt, err = encodePart(name+TombstoneSuffix, w.tombs.Tbl, part.Tombstones)
				out[i].Tomb = &tt
			}
		}
		if err != nil {
			skip[i], err = c.tableError(name, len(recs), err)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for i, t := range out {
		if !skip[i] {
			kept = append(kept, t)
		}
	}
	return kept, nil
}

// ---- committer ----

// trigger asks for an early round (Task.Put with full buffers); the commit loop acts on it.
func (ctl *control) trigger() {
	select {
	case ctl.wants <- struct{}{}:
	default:
	}
}

// wantRound handles trigger on the commit loop: the leader starts a round, anyone else asks
// the leader (at most once a second).
func (ctl *control) wantRound() {
	if time.Since(ctl.lastTrigger) < time.Second {
		return
	}
	ctl.lastTrigger = time.Now()
	if lead, _ := ctl.leadership(); lead {
		select {
		case ctl.requests <- struct{}{}:
		default:
		}
		return
	}
	_ = ctl.send(ctlMsg{Type: ctlRequest})
}

// leadership reports whether this process commits (its tasks hold the first partition of the
// connector's topics) and all partitions of those topics.
func (ctl *control) leadership() (bool, []TP) {
	topics := ctl.c.cfg.Topics
	if ctl.topics != nil {
		_ = ctl.client.RefreshMetadata()
		all, err := ctl.client.Topics()
		if err != nil {
			return false, nil
		}
		topics = nil
		for _, t := range all {
			if matchFull(ctl.topics, t) {
				topics = append(topics, t)
			}
		}
	} else {
		_ = ctl.client.RefreshMetadata(topics...)
	}
	var tps []TP
	for _, t := range topics {
		parts, err := ctl.client.Partitions(t)
		if err != nil {
			continue
		}
		for _, p := range parts {
			tps = append(tps, TP{t, p})
		}
	}
	if len(tps) == 0 {
		return false, nil
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	first := tps[0]
	c := ctl.c
	tasks := c.taskList()
	for _, t := range tasks {
		if t.holds(first) {
			return true, tps
		}
	}
	return false, tps
}

func (ctl *control) commitLoop() {
	defer ctl.wg.Done()
	c := ctl.c
	timer := time.NewTimer(c.cfg.CommitInterval)
	defer timer.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ctl.wants:
			ctl.wantRound()
			continue
		case <-timer.C:
		case <-ctl.requests:
		}
		next := c.cfg.CommitInterval
		lead, all := ctl.leadership()
		ctl.leading.Store(lead)
		if lead && !ctl.commitRound(all) {
			next = c.cfg.RetryBackoff
		} else if lead {
			c.maintainDue(ctl.ctx)
		}
		timer.Reset(next)
	}
}

// commitRound runs one round as the committer.
func (ctl *control) commitRound(all []TP) bool {
	c := ctl.c
	ctx := ctl.ctx
	round := uuid.NewString()
	began := time.Now()
	// drop DATA of earlier rounds still queued
	for len(ctl.datas) > 0 {
		<-ctl.datas
	}
	if err := ctl.send(ctlMsg{Type: ctlStart, Round: round}); err != nil {
		c.log.Warn("iceberg round: cannot start", "err", err)
		return false
	}
	need := make(map[TP]bool, len(all))
	for _, tp := range all {
		need[tp] = true
	}
	var answers []ctlMsg
	deadline := time.NewTimer(c.cfg.CommitTimeout)
	defer deadline.Stop()
	// START is repeated while waiting: a process that started after it, or whose tasks got
	// partitions in a rebalance after it answered, then covers them (sendAssignment)
	repeat := time.NewTicker(max(c.cfg.CommitTimeout/20, 500*time.Millisecond))
	defer repeat.Stop()
collect:
	for len(need) > 0 {
		select {
		case <-c.stop:
			return false
		case <-repeat.C:
			_ = ctl.send(ctlMsg{Type: ctlStart, Round: round})
		case <-deadline.C:
			c.log.Info("iceberg round: commit timeout reached; committing the answers received", "round", round, "missing_partitions", len(need))
			break collect
		case m := <-ctl.datas:
			if m.Round != round {
				continue
			}
			if m.Type == ctlData {
				answers = append(answers, m)
			}
			for _, tp := range m.Assigned {
				delete(need, TP{tp.Topic, tp.Partition})
			}
		}
	}
	ok := true
	var included []string
	perTable := map[string]*tableAnswer{}
	offsets := Offsets{}
	// Include each process's first DATA only (a producer retry may duplicate it), and no two
	// answers for one partition: a partition that moved in a rebalance during the round can be
	// answered by its old owner (drained before the revocation) and by its new owner (re-read
	// from the group offset, planned on the same head) - committing both would write its
	// records twice. The later answer is left out; that process plans its records again, and the
	// table offsets then skip what the earlier one committed.
	seen := map[string]bool{}
	owner := map[TP]string{}
answers:
	for _, m := range answers {
		if m.Error != "" || seen[m.From] {
			continue // an erroring process retries its records in a later round
		}
		for _, o := range m.Offsets {
			if other, ok := owner[TP{o.Topic, o.Partition}]; ok && other != m.From {
				c.log.Info("iceberg round: partition answered twice (rebalance); the later answer waits for the next round",
					"round", round, "partition", TP{o.Topic, o.Partition}.String(), "process", m.From)
				continue answers
			}
		}
		seen[m.From] = true
		included = append(included, m.From)
		for _, o := range m.Offsets {
			tp := TP{o.Topic, o.Partition}
			owner[tp] = m.From
			offsets[tp] = max(offsets[tp], o.Offset)
		}
		for _, t := range m.Tables {
			tp := perTable[t.Name]
			if tp == nil {
				tp = &tableAnswer{name: t.Name}
				perTable[t.Name] = tp
			}
			tp.parts = append(tp.parts, t)
			if len(t.Data)+len(t.Deletes) > 0 {
				tp.contributors++
			}
		}
	}
	if len(perTable) > 0 {
		if err := ctl.applyTables(ctx, round, sortedAnswers(perTable), offsets); err != nil {
			ok = false
			c.mu.Lock()
			c.counts.LastError = err.Error()
			c.mu.Unlock()
			c.log.Warn("iceberg round failed; every process retries its records in the next round", "round", round, "err", err)
		}
	}
	c.log.Info("iceberg round done", "round", round, "ok", ok, "answers", len(answers), "included", len(included),
		"tables", len(perTable), "missing_partitions", len(need), "took", time.Since(began).Round(time.Millisecond))
	c.mu.Lock()
	c.counts.LedRounds++
	if !ok {
		c.counts.LedFailed++
	}
	c.mu.Unlock()
	if err := ctl.send(ctlMsg{Type: ctlCommit, Round: round, OK: ok, Included: included}); err != nil {
		c.log.Warn("iceberg round: cannot announce the result (processes retry their records after their timeout)", "round", round, "err", err)
	}
	return ok
}

type tableAnswer struct {
	name         string
	parts        []ctlTable
	contributors int
}

func sortedAnswers(m map[string]*tableAnswer) []tableAnswer {
	out := make([]tableAnswer, 0, len(m))
	for _, v := range m {
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// applyTables commits every table's parts as one snapshot: tombstone tables first (all of
// them), then the tables.
func (ctl *control) applyTables(ctx context.Context, round string, tables []tableAnswer, offsets Offsets) error {
	c := ctl.c
	cat, err := c.catalog(ctx)
	if err != nil {
		return fmt.Errorf("open catalog: %w", err)
	}
	ws := make([]*Writer, len(tables)) // the writer map is not for concurrent use
	for i, ta := range tables {
		ws[i] = c.writer(cat, ta.name)
	}
	run := func(tombstones bool) error {
		return parallel(len(tables), c.cfg.CommitThreads, func(i int) error {
			ta, w := tables[i], ws[i]
			var cts []ctlTable
			for _, p := range ta.parts {
				if !tombstones {
					cts = append(cts, p)
				} else if p.Tomb != nil && len(p.Tomb.Data)+len(p.Tomb.Deletes) > 0 {
					cts = append(cts, *p.Tomb)
				}
			}
			if len(cts) == 0 {
				return nil
			}
			var offs Offsets
			if tombstones {
				w = &Writer{Cat: cat, Ident: TombstoneIdent(w.Ident), isTombstones: true, Opts: TableOptions{CommitBranch: w.Opts.CommitBranch}}
			} else {
				offs = offsets
			}
			props := map[string]string{SummaryCommitID: round, SummaryTaskID: c.cfg.Name, SummaryContributors: strconv.Itoa(ta.contributors)}
			cctx, cancel := context.WithTimeout(ctx, commitTimeout(c.cfg))
			defer cancel()
			st, err := ctl.applyTable(cctx, w, cts, offs, props)
			if err != nil {
				return fmt.Errorf("table %s: %w", ta.name, err)
			}
			c.countCommit(st, 0, 0)
			return nil
		})
	}
	if err := run(true); err != nil {
		return err
	}
	return run(false)
}

func (ctl *control) applyTable(ctx context.Context, w *Writer, cts []ctlTable, offsets Offsets, props map[string]string) (CommitStats, error) {
	if err := w.Load(ctx, nil); err != nil { // always the current head
		w.Tbl = nil
		return CommitStats{}, err
	}
	parts := make([]*Part, 0, len(cts))
	for _, ct := range cts {
		p, err := decodePart(w.Tbl, ct)
		if err != nil {
			return CommitStats{}, err
		}
		parts = append(parts, p)
	}
	return w.Apply(ctx, parts, offsets, props)
}
