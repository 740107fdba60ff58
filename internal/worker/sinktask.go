package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/metrics"
	"github.com/connectd/connectd/internal/state"
)

// sinkTask is the JVM's WorkerSinkTask: one consumer in group connect-<name>, and one goroutine that
// converts, transforms and puts batches, and commits what the task's preCommit allows.
type sinkTask struct {
	id                                       state.TaskID
	w                                        *Worker
	task                                     connect.SinkTask
	taskProps                                map[string]string
	connProps                                map[string]string
	keyConv                                  connect.Converter
	valConv                                  connect.Converter
	hdrConv                                  connect.HeaderConverter
	keyConvClass, valConvClass, hdrConvClass string
	chain                                    transformChain
	errs                                     *errorHandler
	taskClass                                string
	log                                      *slog.Logger
	metrics                                  *metrics.Task

	groupID     string
	topics      []string
	topicsRegex *regexp.Regexp
	maxBatch    int
	client      sarama.Client
	group       sarama.ConsumerGroup

	// control, from other goroutines
	targetCh  chan state.Target
	commitReq chan struct{}
	events    chan groupEvent
	batches   chan *batch
	done      chan struct{}
	cancel    context.CancelFunc
	cancelled chan struct{} // closed when the graceful deadline passed: skip the final commit
	consumeMu sync.Mutex
	restartCh chan struct{}

	// loop-owned state
	sess          sarama.ConsumerGroupSession
	assignment    map[connect.TopicPartition]bool
	current       map[connect.TopicPartition]int64 // next offset after what was put
	pending       map[connect.TopicPartition]int64 // next offsets of the batch being put
	lastCommitted map[connect.TopicPartition]int64
	taskPaused    map[connect.TopicPartition]bool
	stashed       map[connect.TopicPartition][]*batch // batches of task-paused partitions
	pendingSeeks  map[connect.TopicPartition]int64
	raw           map[rawKey]*sarama.ConsumerMessage // originals of records not yet committed, for the DLQ
	target        state.Target
	retryBatch    []*connect.SinkRecord
	retryAt       time.Time
	idleAt        time.Time // put([]) requested through SinkTaskContext.Timeout
	ready         []*batch  // stashed batches released by a partition resume, processed before new ones
	putSinceFlush bool
	retryDelay    time.Duration
	timeoutReq    time.Duration
	commitWanted  bool
	recordsBuf    []connect.SinkRecord
	ptrBuf        []*connect.SinkRecord
	activeTopics  map[string]bool
	startedAt     time.Time
	recordsPut    int64
	opening       bool // inside task.Open: seeks apply before fetching starts
	rejoining     bool // a rewind ended the session: drop what it still delivers
}

type rawKey struct {
	topic     string
	partition int32
	offset    int64
}

type groupEvent struct {
	assigned bool
	sess     sarama.ConsumerGroupSession
	claims   map[string][]int32
	done     chan struct{}
}

type batch struct {
	sess sarama.ConsumerGroupSession
	tp   connect.TopicPartition
	msgs []*sarama.ConsumerMessage
	hwm  int64 // the partition's high watermark when the batch was cut
}

// SinkTaskStats are counters for metrics and tests.
type SinkTaskStats struct {
	RecordsPut   int64
	Failures     int64
	Skipped      int64
	Assignment   []connect.TopicPartition
	StartedAt    time.Time
	CommittedMax map[connect.TopicPartition]int64
}

func (st *sinkTask) run(ctx context.Context) {
	defer close(st.done)
	err := st.runLoop(ctx)
	st.shutdown(err)
}

func (st *sinkTask) shutdown(runErr error) {
	cancelled := st.isCancelled()
	if !cancelled {
		// a cancelled task's id may already run again here: its status and metrics are the successor's
		defer st.metrics.Forget()
	}
	st.chain.close()
	st.errs.close()
	if st.group != nil {
		st.group.Close()
	}
	if st.client != nil {
		st.client.Close()
	}
	if stopErr := st.task.Stop(); stopErr != nil && runErr == nil {
		runErr = fmt.Errorf("stopping task: %w", stopErr)
	}
	if cancelled {
		st.log.Warn("cancelled task finished", "error", runErr)
		return
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		st.log.Error("task failed", "error", runErr)
		st.w.listener.TaskState(st.id, state.Failed, Trace(fmt.Errorf("Exiting WorkerSinkTask due to unrecoverable exception.: %w", runErr)))
		return
	}
	st.w.listener.TaskState(st.id, state.Unassigned, "")
}

func (st *sinkTask) runLoop(ctx context.Context) error {
	st.task.Initialize(&taskContext{st: st})
	if err := st.task.Start(st.taskProps); err != nil {
		return fmt.Errorf("starting task: %w", err)
	}
	if err := st.openConsumer(); err != nil {
		return err
	}
	st.startedAt = time.Now()
	if st.target == state.Paused {
		st.group.PauseAll()
		st.w.listener.TaskState(st.id, state.PausedS, "")
	} else {
		st.w.listener.TaskState(st.id, state.Running, "")
	}
	consumeCtx, stopConsume := context.WithCancel(ctx)
	consumeDone := make(chan struct{})
	go st.consume(consumeCtx, consumeDone)
	defer func() {
		stopConsume()
		// Drain group events so that Cleanup (revocation) does not block on us while we exit.
		for {
			select {
			case <-consumeDone:
				return
			case ev := <-st.events:
				if !ev.assigned {
					st.onRevoked(context.Background(), ev)
				} else {
					close(ev.done)
				}
			case <-st.batches:
			}
		}
	}()
	go func() {
		for err := range st.group.Errors() {
			st.log.Warn("consumer error", "error", err)
		}
	}()

	flush := time.NewTimer(st.w.cfg.OffsetFlushInterval)
	defer flush.Stop()
	// wake fires for a retriable redelivery (retryAt) or the put([]) a task asked for with Timeout (idleAt).
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	for {
		canPut := st.target == state.Started && st.retryBatch == nil
		if canPut && len(st.ready) > 0 {
			// batches released by a partition resume go first, keeping each partition's order
			if err := st.process(ctx, nil); err != nil {
				return err
			}
		}
		var batchCh chan *batch
		if canPut {
			batchCh = st.batches
		}
		wakeAt := st.idleAt
		if st.retryBatch != nil {
			wakeAt = st.retryAt
		}
		var wakeC <-chan time.Time
		if !wakeAt.IsZero() {
			wake.Reset(max(time.Until(wakeAt), 0))
			wakeC = wake.C
		}
		select {
		case <-ctx.Done():
			return st.finalCommit()
		case ev := <-st.events:
			if ev.assigned {
				if err := st.onAssigned(ev); err != nil {
					return err
				}
			} else if err := st.onRevoked(ctx, ev); err != nil {
				return err
			}
		case b := <-batchCh:
			if err := st.process(ctx, b); err != nil {
				return err
			}
		case <-wakeC:
			recs := st.retryBatch
			st.retryBatch, st.idleAt = nil, time.Time{}
			if recs != nil || st.target == state.Started {
				if err := st.put(ctx, recs); err != nil {
					return err
				}
			}
		case t := <-st.targetCh:
			st.setTarget(t)
		case <-st.commitReq:
			st.commitWanted = true
		case <-flush.C:
			// The JVM's poll times out at the commit deadline and calls put([]) when nothing came in;
			// time-driven sinks flush their buffers on it.
			if !st.putSinceFlush && st.sess != nil && st.target == state.Started && st.retryBatch == nil {
				if err := st.put(ctx, nil); err != nil {
					return err
				}
			}
			st.putSinceFlush = false
			st.commitWanted = true
			flush.Reset(st.w.cfg.OffsetFlushInterval)
		}
		wake.Stop()
		if st.commitWanted && st.sess != nil {
			st.commitWanted = false
			if err := st.commit(ctx, false); err != nil {
				return err
			}
		}
	}
}

func (st *sinkTask) openConsumer() error {
	props := map[string]string{}
	for k, v := range st.w.cfg.ClientProps("consumer") {
		props[k] = v
	}
	for k, v := range connect.WithPrefix(st.connProps, "consumer.override.") {
		props[k] = v
	}
	cfg, err := kafka.NewConfig(props)
	if err != nil {
		return err
	}
	if err := kafka.ApplyConsumer(cfg, props); err != nil {
		return err
	}
	cfg.ClientID = fmt.Sprintf("connector-consumer-%s-%d", st.id.Connector, st.id.Task)
	if v := props["client.id"]; v != "" {
		cfg.ClientID = v
	}
	st.groupID = "connect-" + st.id.Connector
	if v := props["group.id"]; v != "" {
		st.groupID = v
	}
	st.maxBatch = 500
	if v := props["max.poll.records"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("invalid max.poll.records %q", v)
		}
		st.maxBatch = n
	}
	client, err := kafka.NewClient(kafka.Brokers(props), cfg)
	if err != nil {
		return connect.Retriable(fmt.Errorf("creating consumer for %s: %w", st.groupID, err))
	}
	group, err := sarama.NewConsumerGroupFromClient(st.groupID, client)
	if err != nil {
		client.Close()
		return fmt.Errorf("creating consumer group %s: %w", st.groupID, err)
	}
	st.client, st.group = client, group
	return nil
}

// consume keeps the group session alive; each session ends at a rebalance, or when the loop asks for a
// rejoin (a rewind of partitions that are already being fetched).
func (st *sinkTask) consume(ctx context.Context, done chan struct{}) {
	defer close(done)
	h := &groupHandler{st: st}
	for ctx.Err() == nil {
		topics, err := st.resolveTopics()
		if err != nil || len(topics) == 0 {
			if err != nil {
				st.log.Warn("resolving topics", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				continue
			}
		}
		sessCtx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-st.restartCh:
				cancel()
			case <-sessCtx.Done():
			}
		}()
		if st.topicsRegex != nil {
			go st.watchTopics(sessCtx, cancel, topics)
		}
		err = st.group.Consume(sessCtx, topics, h)
		cancel()
		if err != nil && ctx.Err() == nil {
			if errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return
			}
			st.log.Warn("consumer group session ended", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
}

func (st *sinkTask) resolveTopics() ([]string, error) {
	if st.topicsRegex == nil {
		return st.topics, nil
	}
	if err := st.client.RefreshMetadata(); err != nil {
		return nil, err
	}
	all, err := st.client.Topics()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range all {
		if m := st.topicsRegex.FindString(t); m == t {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}

// watchTopics ends the session when the regex matches a different topic set.
func (st *sinkTask) watchTopics(ctx context.Context, cancel context.CancelFunc, current []string) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			ts, err := st.resolveTopics()
			if err == nil && fmt.Sprint(ts) != fmt.Sprint(current) {
				cancel()
				return
			}
		}
	}
}

type groupHandler struct{ st *sinkTask }

func (h *groupHandler) Setup(sess sarama.ConsumerGroupSession) error {
	ev := groupEvent{assigned: true, sess: sess, claims: sess.Claims(), done: make(chan struct{})}
	select {
	case h.st.events <- ev:
	case <-sess.Context().Done():
		return nil
	}
	<-ev.done
	return nil
}

func (h *groupHandler) Cleanup(sess sarama.ConsumerGroupSession) error {
	ev := groupEvent{sess: sess, claims: sess.Claims(), done: make(chan struct{})}
	h.st.events <- ev
	<-ev.done
	return nil
}

func (h *groupHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	tp := connect.TopicPartition{Topic: claim.Topic(), Partition: claim.Partition()}
	msgs := claim.Messages()
	max := h.st.maxBatch
	for {
		var first *sarama.ConsumerMessage
		select {
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			first = m
		case <-sess.Context().Done():
			return nil
		}
		b := &batch{sess: sess, tp: tp, msgs: make([]*sarama.ConsumerMessage, 1, min(max, 64)), hwm: claim.HighWaterMarkOffset()}
		b.msgs[0] = first
	drain:
		for len(b.msgs) < max {
			select {
			case m, ok := <-msgs:
				if !ok {
					break drain
				}
				b.msgs = append(b.msgs, m)
			default:
				break drain
			}
		}
		select {
		case h.st.batches <- b:
		case <-sess.Context().Done():
			return nil
		}
	}
}

func (st *sinkTask) onAssigned(ev groupEvent) error {
	defer close(ev.done)
	st.sess = ev.sess
	var tps []connect.TopicPartition
	for topic, parts := range ev.claims {
		for _, p := range parts {
			tp := connect.TopicPartition{Topic: topic, Partition: p}
			tps = append(tps, tp)
			st.assignment[tp] = true
		}
	}
	sortTPs(tps)
	st.rejoining = false
	st.opening = true
	err := st.task.Open(tps)
	st.opening = false
	if err != nil {
		return fmt.Errorf("opening partitions %v: %w", tps, err)
	}
	for tp, off := range st.pendingSeeks {
		if st.assignment[tp] {
			setOffset(ev.sess, tp.Topic, tp.Partition, off, "")
			st.current[tp] = off
		}
	}
	st.pendingSeeks = map[connect.TopicPartition]int64{}
	for tp := range st.taskPaused {
		if !st.assignment[tp] { // JVM: pausedPartitions.retainAll(assignment)
			delete(st.taskPaused, tp)
			st.group.Resume(map[string][]int32{tp.Topic: {tp.Partition}})
		}
	}
	if st.target != state.Started {
		st.group.PauseAll()
	}
	st.log.Info("partitions assigned", "partitions", fmt.Sprint(tps))
	return nil
}

func (st *sinkTask) onRevoked(ctx context.Context, ev groupEvent) error {
	defer close(ev.done)
	if st.sess == nil {
		return nil
	}
	var tps []connect.TopicPartition
	for tp := range st.assignment {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	var err error
	if !st.isCancelled() { // a task cancelled after the graceful timeout skips its final commit (JVM)
		err = st.commit(context.Background(), true)
	}
	if cerr := st.task.Close(tps); cerr != nil && err == nil {
		err = fmt.Errorf("closing partitions: %w", cerr)
	}
	st.sess = nil
	st.assignment = map[connect.TopicPartition]bool{}
	st.current = map[connect.TopicPartition]int64{}
	st.pending = map[connect.TopicPartition]int64{}
	st.lastCommitted = map[connect.TopicPartition]int64{}
	st.stashed = map[connect.TopicPartition][]*batch{}
	st.retryBatch, st.idleAt = nil, time.Time{}
	st.ready = nil
	st.pendingSeeks = map[connect.TopicPartition]int64{}
	st.raw = map[rawKey]*sarama.ConsumerMessage{}
	return err
}

func (st *sinkTask) isCancelled() bool {
	select {
	case <-st.cancelled:
		return true
	default:
		return false
	}
}

func (st *sinkTask) setTarget(t state.Target) {
	if t == st.target {
		return
	}
	st.target = t
	switch t {
	case state.Paused:
		st.group.PauseAll()
		st.commitWanted = true
		st.w.listener.TaskState(st.id, state.PausedS, "")
	case state.Started:
		st.group.ResumeAll()
		for tp := range st.taskPaused {
			st.group.Pause(map[string][]int32{tp.Topic: {tp.Partition}})
		}
		st.w.listener.TaskState(st.id, state.Running, "")
	}
}

// process converts and transforms fetched batches (the resume queue, then b, then any batches already
// waiting) and puts them as one batch.
func (st *sinkTask) process(ctx context.Context, b *batch) error {
	bs := st.ready
	st.ready = nil
	n := 0
	for _, r := range bs {
		n += len(r.msgs)
	}
	if b != nil {
		bs = append(bs, b)
		n += len(b.msgs)
	}
more:
	for n < st.maxBatch {
		select {
		case o := <-st.batches:
			bs = append(bs, o)
			n += len(o.msgs)
		default:
			break more
		}
	}
	st.recordsBuf = st.recordsBuf[:0]
	for _, b := range bs {
		if b.sess != st.sess || st.rejoining {
			continue // fetched before a revocation or a rewind: it will be fetched again
		}
		if st.taskPaused[b.tp] {
			// sarama ignores pauses for partitions whose consumer did not exist yet (set during Setup):
			// pause again now that it does, and keep what arrived for the resume.
			st.group.Pause(map[string][]int32{b.tp.Topic: {b.tp.Partition}})
			st.stashed[b.tp] = append(st.stashed[b.tp], b)
			continue
		}
		if _, seen := st.lastCommitted[b.tp]; !seen && len(b.msgs) > 0 {
			// the session's start position is the last committed one (JVM: positions at assignment)
			st.lastCommitted[b.tp] = b.msgs[0].Offset
			if _, ok := st.current[b.tp]; !ok {
				st.current[b.tp] = b.msgs[0].Offset
			}
		}
		if err := st.convertBatch(ctx, b); err != nil {
			return err
		}
	}
	if len(st.recordsBuf) == 0 {
		st.applyPending()
		return nil
	}
	st.ptrBuf = st.ptrBuf[:0]
	for i := range st.recordsBuf {
		st.ptrBuf = append(st.ptrBuf, &st.recordsBuf[i])
	}
	return st.put(ctx, st.ptrBuf)
}

func (st *sinkTask) convertBatch(ctx context.Context, b *batch) error {
	st.metrics.Read.Add(float64(len(b.msgs)))
	if n := len(b.msgs); n > 0 {
		st.metrics.SetLag(b.tp.Topic, b.tp.Partition, max(b.hwm-(b.msgs[n-1].Offset+1), 0))
	}
	for _, m := range b.msgs {
		tp := b.tp
		rec, skip, err := st.convert(ctx, m)
		if err != nil {
			return err
		}
		// Records dropped by the error handler or a filter still advance the offset (once put succeeds).
		st.pending[tp] = m.Offset + 1
		if st.activeTopics != nil && !st.activeTopics[m.Topic] {
			st.activeTopics[m.Topic] = true
			st.w.topicActive(st.id.Connector, m.Topic, st.id.Task)
		}
		if skip || rec == nil {
			continue
		}
		if st.errs.dlq != nil || st.errs.tolerateAll {
			st.raw[rawKey{m.Topic, m.Partition, m.Offset}] = m
		}
		st.recordsBuf = append(st.recordsBuf, *rec)
	}
	return nil
}

func (st *sinkTask) convert(ctx context.Context, m *sarama.ConsumerMessage) (*connect.SinkRecord, bool, error) {
	rec := &connect.SinkRecord{
		Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
		OriginalTopic: m.Topic, OriginalPartition: m.Partition, OriginalOffset: m.Offset,
		Timestamp: connect.NoTimestamp,
	}
	if !m.Timestamp.IsZero() {
		rec.Timestamp = m.Timestamp.UnixMilli()
		rec.TimestampType = connect.CreateTime
	}
	if len(m.Headers) > 0 {
		hs, err := st.convertHeaders(m)
		if err != nil {
			skip, err := st.errs.retry(ctx, StageHeaderConverter, st.hdrConvClass, m, err, func() (e error) {
				hs, e = st.convertHeaders(m)
				return e
			})
			if skip || err != nil {
				return nil, skip, err
			}
		}
		rec.Headers = hs
	}
	sv, skip, err := st.convertData(ctx, StageKeyConverter, st.keyConvClass, st.keyConv, m, rec.Headers, m.Key)
	if skip || err != nil {
		return nil, skip, err
	}
	rec.KeySchema, rec.Key = sv.Schema, sv.Value
	sv, skip, err = st.convertData(ctx, StageValueConverter, st.valConvClass, st.valConv, m, rec.Headers, m.Value)
	if skip || err != nil {
		return nil, skip, err
	}
	rec.ValueSchema, rec.Value = sv.Schema, sv.Value
	for i := range st.chain {
		step := &st.chain[i]
		out, err := step.apply(rec)
		if err != nil {
			if out, skip, err = st.retryTransform(ctx, step, m, rec, err); skip || err != nil {
				return nil, skip, err
			}
		}
		if out == nil {
			return nil, true, nil
		}
		rec = out
	}
	return rec, false, nil
}

func (st *sinkTask) convertHeaders(m *sarama.ConsumerMessage) (connect.Headers, error) {
	hs := make(connect.Headers, 0, len(m.Headers))
	for _, h := range m.Headers {
		sv, err := st.hdrConv.ToConnectHeader(m.Topic, string(h.Key), h.Value)
		if err != nil {
			return nil, err
		}
		hs = append(hs, connect.Header{Key: string(h.Key), Schema: sv.Schema, Value: sv.Value})
	}
	return hs, nil
}

// convertData runs a key or value converter; only a failure goes through the error handler (retryConvert
// is a separate function so that its closure's captures cost nothing on the clean path).
func (st *sinkTask) convertData(ctx context.Context, stage Stage, class string, conv connect.Converter, m *sarama.ConsumerMessage, hs connect.Headers, data []byte) (connect.SchemaAndValue, bool, error) {
	sv, err := conv.ToConnectData(m.Topic, hs, data)
	if err == nil {
		return sv, false, nil
	}
	return st.retryConvert(ctx, stage, class, conv, m, hs, data, err)
}

func (st *sinkTask) retryConvert(ctx context.Context, stage Stage, class string, conv connect.Converter, m *sarama.ConsumerMessage, hs connect.Headers, data []byte, first error) (connect.SchemaAndValue, bool, error) {
	var sv connect.SchemaAndValue
	skip, err := st.errs.retry(ctx, stage, class, m, first, func() (e error) {
		sv, e = conv.ToConnectData(m.Topic, hs, data)
		return e
	})
	return sv, skip, err
}

func (st *sinkTask) retryTransform(ctx context.Context, step *transformStep, m *sarama.ConsumerMessage, rec *connect.SinkRecord, first error) (*connect.SinkRecord, bool, error) {
	var out *connect.SinkRecord
	skip, err := st.errs.retry(ctx, StageTransformation, step.class, m, first, func() (e error) {
		out, e = step.apply(rec)
		return e
	})
	return out, skip, err
}

// put delivers records; a retriable error keeps the batch for redelivery with backoff, any other fails
// the task.
func (st *sinkTask) put(ctx context.Context, recs []*connect.SinkRecord) error {
	st.timeoutReq = 0
	start := time.Now()
	err := st.task.Put(ctx, recs)
	st.metrics.Put.Observe(time.Since(start).Seconds())
	if err == nil {
		st.metrics.Sent.Add(float64(len(recs)))
		st.recordsPut += int64(len(recs))
		st.retryDelay = 0
		st.putSinceFlush = true
		st.applyPending()
		if st.timeoutReq > 0 {
			st.idleAt = time.Now().Add(st.timeoutReq)
		}
		st.pruneRaw()
		return nil
	}
	if connect.IsRetriable(err) {
		// Keep our own copy: the buffers are reused for the next fetch.
		cp := make([]*connect.SinkRecord, len(recs))
		for i, r := range recs {
			c := *r
			cp[i] = &c
		}
		st.retryBatch = cp
		d := st.timeoutReq
		if d <= 0 {
			st.retryDelay = min(max(2*st.retryDelay, 100*time.Millisecond), 10*time.Second)
			d = st.retryDelay
		}
		st.retryAt = time.Now().Add(d)
		st.log.Warn("retriable error from put, redelivering the batch", "records", len(recs), "after", d, "error", err)
		return nil
	}
	return fmt.Errorf("put: %w", err)
}

// maxRawKept bounds the originals kept for DLQ reports of records not yet committed (a task whose
// preCommit never commits must not keep every record); beyond it, reports of already put records carry
// the context headers without the original bytes.
const maxRawKept = 100_000

func (st *sinkTask) pruneRaw() {
	if len(st.raw) <= maxRawKept {
		return
	}
	for k := range st.raw {
		if cur, ok := st.current[connect.TopicPartition{Topic: k.topic, Partition: k.partition}]; ok && k.offset < cur {
			delete(st.raw, k)
		}
	}
}

// applyPending advances the consumed positions once a batch was put (JVM: currentOffsets after put).
func (st *sinkTask) applyPending() {
	for tp, off := range st.pending {
		if st.assignment[tp] {
			st.current[tp] = off
		}
		delete(st.pending, tp)
	}
}

// commit asks the task what is safe (preCommit, or flush + current) and commits it to the group.
func (st *sinkTask) commit(ctx context.Context, final bool) error {
	if st.sess == nil {
		return nil
	}
	current := make(map[connect.TopicPartition]connect.OffsetAndMetadata, len(st.current))
	for tp, off := range st.current {
		if st.assignment[tp] {
			current[tp] = connect.OffsetAndMetadata{Offset: off}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, max(st.w.cfg.OffsetFlushTimeout, 5*time.Second)*6)
	defer cancel()
	var toCommit map[connect.TopicPartition]connect.OffsetAndMetadata
	var err error
	if pc, ok := st.task.(connect.PreCommitter); ok {
		toCommit, err = pc.PreCommit(cctx, current)
	} else {
		err = st.task.Flush(cctx, current)
		toCommit = current
	}
	if err != nil {
		st.metrics.Fails.Inc()
		st.log.Error("offset commit failed, rewinding to the last committed offsets", "error", err)
		if final {
			return nil
		}
		st.rewindToCommitted()
		return nil
	}
	changed := false
	for tp, om := range toCommit {
		cur, consumed := st.current[tp]
		if !st.assignment[tp] || !consumed || om.Offset > cur {
			continue
		}
		if last, ok := st.lastCommitted[tp]; ok && last == om.Offset {
			continue
		}
		setOffset(st.sess, tp.Topic, tp.Partition, om.Offset, om.Metadata)
		st.lastCommitted[tp] = om.Offset
		st.metrics.SetCommitted(tp.Topic, tp.Partition, om.Offset)
		changed = true
	}
	// Commit on every cycle, not only when an offset changed: sarama keeps an offset whose
	// commit failed dirty and re-sends it on the next Commit (a no-op when nothing is dirty).
	st.sess.Commit()
	if changed {
		st.metrics.Commits.Inc()
	}
	// Originals below every committed offset are no longer needed for DLQ reporting.
	for k := range st.raw {
		if last, ok := st.lastCommitted[connect.TopicPartition{Topic: k.topic, Partition: k.partition}]; ok && k.offset < last {
			delete(st.raw, k)
		}
	}
	return nil
}

// rewindToCommitted re-consumes from the last committed offsets after a failed flush (JVM behaviour).
func (st *sinkTask) rewindToCommitted() {
	for tp := range st.assignment {
		if off, ok := st.lastCommitted[tp]; ok {
			st.pendingSeeks[tp] = off
			setOffset(st.sess, tp.Topic, tp.Partition, off, "")
			st.current[tp] = off
		}
	}
	clear(st.pending)
	st.retryBatch, st.idleAt = nil, time.Time{}
	st.ready = nil
	clear(st.stashed)
	st.requestRestart()
}

func (st *sinkTask) requestRestart() {
	st.rejoining = true
	select {
	case st.restartCh <- struct{}{}:
	default:
	}
}

func (st *sinkTask) finalCommit() error {
	if st.isCancelled() {
		return context.Canceled
	}
	return nil // the final commit happens in onRevoked when the session ends
}

func sortTPs(tps []connect.TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// taskContext is the SinkTaskContext handed to the task; its methods run on the task goroutine.
type taskContext struct {
	pluginRuntime
	st *sinkTask
}

func (c *taskContext) Configs() map[string]string { return c.st.taskProps }

func (c *taskContext) Offset(offsets map[connect.TopicPartition]int64) {
	st := c.st
	rejoin := false
	for tp, off := range offsets {
		st.pendingSeeks[tp] = off
		if st.sess != nil && st.assignment[tp] {
			setOffset(st.sess, tp.Topic, tp.Partition, off, "")
			st.current[tp] = off
			delete(st.pending, tp)
			rejoin = true
		}
	}
	// Called from Open (during assignment) the seeks apply before fetching starts; later, the session must
	// restart to fetch from the new positions.
	if rejoin && !st.opening {
		st.requestRestart()
	}
}

func (c *taskContext) Timeout(d time.Duration) { c.st.timeoutReq = d }

func (c *taskContext) Assignment() []connect.TopicPartition {
	var out []connect.TopicPartition
	for tp := range c.st.assignment {
		out = append(out, tp)
	}
	sortTPs(out)
	return out
}

func (c *taskContext) Pause(tps ...connect.TopicPartition) {
	for _, tp := range tps {
		c.st.taskPaused[tp] = true
		c.st.group.Pause(map[string][]int32{tp.Topic: {tp.Partition}})
	}
}

func (c *taskContext) Resume(tps ...connect.TopicPartition) {
	st := c.st
	for _, tp := range tps {
		delete(st.taskPaused, tp)
		if st.target == state.Started {
			st.group.Resume(map[string][]int32{tp.Topic: {tp.Partition}})
		}
		if bs := st.stashed[tp]; len(bs) > 0 {
			delete(st.stashed, tp)
			st.ready = append(st.ready, bs...)
		}
	}
}

// RequestCommit may be called from any goroutine (a connector's own committer, for example).
func (c *taskContext) RequestCommit() {
	select {
	case c.st.commitReq <- struct{}{}:
	default:
	}
}

func (c *taskContext) WorkerKafkaProps() map[string]string { return c.st.w.cfg.BaseClientProps() }
func (c *taskContext) WorkerID() string                    { return c.st.w.id }
func (c *taskContext) Distributed() bool                   { return c.st.w.cfg.Distributed }

var _ connect.WorkerInfo = (*taskContext)(nil)

func (c *taskContext) ErrantRecordReporter() connect.ErrantRecordReporter {
	if !c.st.errs.tolerateAll && c.st.errs.dlq == nil {
		return nil
	}
	return &errantReporter{st: c.st}
}

type errantReporter struct{ st *sinkTask }

func (r *errantReporter) Report(ctx context.Context, rec *connect.SinkRecord, cause error) error {
	st := r.st
	raw := st.raw[rawKey{rec.OriginalTopic, rec.OriginalPartition, rec.OriginalOffset}]
	if raw == nil {
		raw = &sarama.ConsumerMessage{Topic: rec.OriginalTopic, Partition: rec.OriginalPartition, Offset: rec.OriginalOffset}
	}
	_, err := st.errs.fail(ctx, StageTaskPut, st.taskClass, raw, cause)
	return err
}

// setOffset marks exactly off as the partition's next offset: sarama's MarkOffset only moves forward and
// ResetOffset only backward.
func setOffset(sess sarama.ConsumerGroupSession, topic string, partition int32, off int64, meta string) {
	sess.MarkOffset(topic, partition, off, meta)
	sess.ResetOffset(topic, partition, off, meta)
}
