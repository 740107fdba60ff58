package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/state"
)

// The task's consumer is a franz-go group client polled by one goroutine (consume), which hands each
// partition's records to the task loop as a batch. Rebalances wait for the batches of a poll to be handed
// over (BlockRebalanceOnPoll), so the loop never sees records of a partition after its revocation. The
// group callbacks run on franz-go's goroutine and wait for the loop to handle them: Open at assignment,
// the final commit and Close at revocation. Seeks the loop asks for are applied by the polling
// goroutine between polls; batches polled before a partition's seek are dropped by the loop.

// seekQueue carries seeks from the task loop to the polling goroutine.
type seekQueue struct {
	mu      sync.Mutex
	pending map[connect.TopicPartition]int64
	epoch   uint64             // counts the seeks asked for
	wake    context.CancelFunc // ends the poll in progress, so the seeks apply without waiting for records
	// at assignment: the seeks the task asked for in Open, applied to the fetched positions
	open map[connect.TopicPartition]int64
}

func (q *seekQueue) push(seeks map[connect.TopicPartition]int64) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.epoch++
	if q.pending == nil {
		q.pending = map[connect.TopicPartition]int64{}
	}
	for tp, off := range seeks {
		q.pending[tp] = off
	}
	if q.wake != nil {
		q.wake()
	}
	return q.epoch
}

// take returns the seeks to apply before the next poll and the epoch they bring the consumer to.
func (q *seekQueue) take(wake context.CancelFunc) (map[connect.TopicPartition]int64, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pending
	q.pending = nil
	q.wake = wake
	return p, q.epoch
}

func (q *seekQueue) setOpen(seeks map[connect.TopicPartition]int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.open = seeks
}

func (q *seekQueue) takeOpen() map[connect.TopicPartition]int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	o := q.open
	q.open = nil
	return o
}

func (st *sinkTask) openConsumer(ctx context.Context) error {
	props := map[string]string{}
	for k, v := range st.w.cfg.ClientProps("consumer") {
		props[k] = v
	}
	for k, v := range connect.WithPrefix(st.connProps, "consumer.override.") {
		props[k] = v
	}
	if props["client.id"] == "" {
		props["client.id"] = fmt.Sprintf("connector-consumer-%s-%d", st.id.Connector, st.id.Task)
	}
	if st.topicsRegex != nil && props["metadata.max.age.ms"] == "" {
		props["metadata.max.age.ms"] = "5000" // new topics that match are picked up within seconds
	}
	opts, err := kafka.ConsumerOpts(props)
	if err != nil {
		return err
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
	if st.topicsRegex != nil {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(st.topicsRegex.String()))
	} else {
		opts = append(opts, kgo.ConsumeTopics(st.topics...))
	}
	opts = append(opts,
		kgo.ConsumerGroup(st.groupID),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(st.onPartitionsAssigned),
		kgo.OnPartitionsRevoked(st.onPartitionsRevoked),
		kgo.OnPartitionsLost(st.onPartitionsLost),
		kgo.OnPartitionsCallbackBlocked(func(context.Context, *kgo.Client) {
			select {
			case st.rebalanceWanted <- struct{}{}:
			default:
			}
		}),
		kgo.AdjustFetchOffsetsFn(st.adjustFetchOffsets),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("creating consumer for %s: %w", st.groupID, err)
	}
	st.client, st.consumerProps = cl, props // closed by shutdown, once the loop no longer blocks group callbacks
	if err := kafka.PingConsumer(ctx, cl, props); err != nil {
		return connect.Retriable(fmt.Errorf("creating consumer for %s: %w", st.groupID, err))
	}
	return nil
}

// onPartitionsAssigned runs on franz-go's group goroutine: the loop opens the partitions before they are
// fetched.
func (st *sinkTask) onPartitionsAssigned(_ context.Context, _ *kgo.Client, claims map[string][]int32) {
	ev := groupEvent{assigned: true, claims: claims, done: make(chan struct{})}
	select {
	case st.events <- ev:
		<-ev.done
		st.seeks.setOpen(ev.seeks)
		st.joined.Store(true)
	case <-st.loopDone:
	}
}

// onPartitionsRevoked runs on franz-go's group goroutine: the loop commits what the task allows and
// closes the partitions.
func (st *sinkTask) onPartitionsRevoked(_ context.Context, _ *kgo.Client, claims map[string][]int32) {
	st.joined.Store(false)
	ev := groupEvent{claims: claims, done: make(chan struct{})}
	select {
	case st.events <- ev:
		<-ev.done
	case <-st.loopDone:
	}
}

func (st *sinkTask) onPartitionsLost(_ context.Context, _ *kgo.Client, claims map[string][]int32) {
	st.joined.Store(false)
	ev := groupEvent{lost: true, claims: claims, done: make(chan struct{})}
	select {
	case st.events <- ev:
		<-ev.done
	case <-st.loopDone:
	}
}

// adjustFetchOffsets applies the seeks of Open to the positions the group fetched.
func (st *sinkTask) adjustFetchOffsets(_ context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	for tp, off := range st.seeks.takeOpen() {
		if ps, ok := offsets[tp.Topic]; ok {
			if _, ok := ps[tp.Partition]; ok {
				ps[tp.Partition] = kgo.NewOffset().At(off).WithEpoch(-1)
			}
		}
	}
	return offsets, nil
}

// consume polls until ctx ends, then leaves the group: the revocation makes the final offset commit.
func (st *sinkTask) consume(ctx context.Context, done chan struct{}) {
	defer close(done)
	defer st.leaveGroup()
	var epoch uint64
	for ctx.Err() == nil {
		pctx, wake := context.WithCancel(ctx)
		seeks, e := st.seeks.take(wake)
		st.applySeeks(seeks)
		epoch = e
		fs := st.client.PollRecords(pctx, st.maxBatch)
		wake()
		if fs.IsClientClosed() {
			st.client.AllowRebalance() // the poll returned something: the leave waits for this
			return
		}
		fs.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) {
				st.log.Warn("consumer error", "topic", topic, "partition", partition, "error", err)
			}
		})
		st.handOver(ctx, fs, epoch)
		st.client.AllowRebalance()
	}
}

// leaveGroup leaves the group when the task stops. In a session, the leave waits for the revocation,
// which makes the final commit. Outside one, the consumer may wait in a JoinGroup that the coordinator
// answers only once every member rejoined (up to the rebalance timeout); the member is then removed on a
// connection of its own, which answers that join at once, as the JVM's consumer.wakeup() ends a join.
func (st *sinkTask) leaveGroup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// No poll may hold rebalances back now: a leave waits for them, and would wait for ever, in a goroutine
	// of its own that keeps the client, when it gave up.
	st.client.AllowRebalance()
	if memberID, _ := st.client.GroupMetadata(); memberID != "" && !st.joined.Load() {
		now, stop := context.WithCancel(ctx)
		stop()
		_ = st.client.LeaveGroupContext(now) // starts the leave without waiting: no rejoin after the join's answer
		if err := kafka.LeaveGroup(ctx, st.consumerProps, st.groupID, memberID); err != nil {
			st.log.Debug("leaving the group during a join", "error", err)
		}
	}
	_ = st.client.LeaveGroupContext(ctx)
}

// handOver sends each partition's records of a poll to the loop. When a rebalance waits for the poll,
// the partitions not handed over yet are rewound to their first record instead, so nothing is skipped
// if the rebalance keeps them here.
func (st *sinkTask) handOver(ctx context.Context, fs kgo.Fetches, epoch uint64) {
	var rewind map[string]map[int32]kgo.EpochOffset
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		if rewind == nil {
			b := &batch{epoch: epoch, tp: connect.TopicPartition{Topic: p.Topic, Partition: p.Partition}, msgs: p.Records, hwm: p.HighWatermark}
			select {
			case st.batches <- b:
				return
			case <-st.rebalanceWanted:
			case <-ctx.Done():
			}
			rewind = map[string]map[int32]kgo.EpochOffset{}
		}
		setOffset(rewind, p.Topic, p.Partition, p.Records[0].Offset)
	})
	if rewind != nil {
		st.client.SetOffsets(rewind)
	}
}

func (st *sinkTask) applySeeks(seeks map[connect.TopicPartition]int64) {
	if len(seeks) == 0 {
		return
	}
	m := map[string]map[int32]kgo.EpochOffset{}
	for tp, off := range seeks {
		setOffset(m, tp.Topic, tp.Partition, off)
	}
	st.client.SetOffsets(m)
}

// setOffset puts off as a partition's next offset into m, in the form the client's SetOffsets and
// commits take.
func setOffset(m map[string]map[int32]kgo.EpochOffset, topic string, partition int32, off int64) {
	if m[topic] == nil {
		m[topic] = map[int32]kgo.EpochOffset{}
	}
	m[topic][partition] = kgo.EpochOffset{Epoch: -1, Offset: off}
}

// seek moves the fetch positions of assigned partitions; batches fetched before are dropped.
func (st *sinkTask) seek(seeks map[connect.TopicPartition]int64) {
	if len(seeks) == 0 {
		return
	}
	epoch := st.seeks.push(seeks)
	for tp := range seeks {
		st.seekEpoch[tp] = epoch
	}
}

// byTopic groups partitions by topic, as the client's pause and resume take them.
func byTopic(tps ...connect.TopicPartition) map[string][]int32 {
	m := map[string][]int32{}
	for _, tp := range tps {
		m[tp.Topic] = append(m[tp.Topic], tp.Partition)
	}
	return m
}

// pausable is byTopic of the partitions set in tps.
func pausable(tps map[connect.TopicPartition]bool) map[string][]int32 {
	var set []connect.TopicPartition
	for tp, ok := range tps {
		if ok {
			set = append(set, tp)
		}
	}
	return byTopic(set...)
}

func (st *sinkTask) pauseFetch(tps ...connect.TopicPartition) {
	st.client.PauseFetchPartitions(byTopic(tps...))
}

func (st *sinkTask) resumeFetch(tps ...connect.TopicPartition) {
	st.client.ResumeFetchPartitions(byTopic(tps...))
}

// syncPaused makes the fetch pauses those of the target state and the task's own pauses.
func (st *sinkTask) syncPaused() {
	if st.target != state.Started {
		st.client.PauseFetchPartitions(pausable(st.assignment))
		return
	}
	resume := map[connect.TopicPartition]bool{}
	for tp := range st.assignment {
		resume[tp] = !st.taskPaused[tp]
	}
	st.client.ResumeFetchPartitions(pausable(resume))
	st.client.PauseFetchPartitions(pausable(st.taskPaused))
}

func (st *sinkTask) onAssigned(ev groupEvent) error {
	defer close(ev.done)
	st.inSession = true
	var tps []connect.TopicPartition
	for topic, parts := range ev.claims {
		for _, p := range parts {
			tp := connect.TopicPartition{Topic: topic, Partition: p}
			tps = append(tps, tp)
			st.assignment[tp] = true
		}
	}
	sortTPs(tps)
	st.opening = true
	err := st.task.Open(tps)
	st.opening = false
	if err != nil {
		return fmt.Errorf("opening partitions %v: %w", tps, err)
	}
	ev.seeks = map[connect.TopicPartition]int64{}
	for tp, off := range st.pendingSeeks {
		if st.assignment[tp] {
			ev.seeks[tp] = off
			st.current[tp] = off
		}
	}
	st.pendingSeeks = map[connect.TopicPartition]int64{}
	for tp := range st.taskPaused {
		if !st.assignment[tp] { // JVM: pausedPartitions.retainAll(assignment)
			delete(st.taskPaused, tp)
		}
	}
	st.syncPaused()
	st.noteAssignedOffsets(tps)
	st.log.Info("partitions assigned", "partitions", fmt.Sprint(tps))
	return nil
}

// noteAssignedOffsets takes the group's committed offsets of newly assigned partitions as the last committed
// ones (the JVM's lastCommittedOffsets start at the assigned position) and their end offsets as high
// watermarks, so that the committed lag is reported for a partition that has nothing new to consume. A
// broker that does not answer in time leaves them to the next fetch and commit.
func (st *sinkTask) noteAssignedOffsets(tps []connect.TopicPartition) {
	if st.client == nil || len(tps) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.Topic] = true
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	adm := kadm.NewClient(st.client)
	committed, err := adm.FetchOffsetsForTopics(ctx, st.groupID, names...)
	if err != nil {
		return
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return
	}
	for _, tp := range tps {
		if o, ok := committed.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.At >= 0 {
			if _, known := st.lastCommitted[tp]; !known {
				st.lastCommitted[tp] = o.At
				st.metrics.SetCommitted(tp.Topic, tp.Partition, o.At)
			}
		}
		if e, ok := ends.Lookup(tp.Topic, tp.Partition); ok && e.Err == nil {
			st.noteHWM(tp, e.Offset)
		}
	}
}

// onRevoked makes the final commit of revoked partitions (not of lost ones, as the JVM) and closes them.
// An eager rebalance revokes the whole assignment, a cooperative one a part of it.
func (st *sinkTask) onRevoked(ev groupEvent) error {
	defer close(ev.done)
	revoked := map[connect.TopicPartition]bool{}
	var tps []connect.TopicPartition
	for topic, parts := range ev.claims {
		for _, p := range parts {
			if tp := (connect.TopicPartition{Topic: topic, Partition: p}); st.assignment[tp] {
				revoked[tp] = true
				tps = append(tps, tp)
			}
		}
	}
	if !st.inSession || len(tps) == 0 {
		return nil
	}
	sortTPs(tps)
	var err error
	if !ev.lost && !st.isCancelled() { // a task cancelled after the graceful timeout skips its final commit (JVM)
		err = st.commit(context.Background(), true, revoked)
	}
	if cerr := st.task.Close(tps); cerr != nil && err == nil {
		err = fmt.Errorf("closing partitions: %w", cerr)
	}
	// a partition that comes back starts unpaused by the target (syncPaused pauses it again)
	st.client.ResumeFetchPartitions(pausable(revoked))
	for tp := range revoked {
		delete(st.assignment, tp)
		delete(st.current, tp)
		delete(st.pending, tp)
		delete(st.lastCommitted, tp)
		delete(st.stashed, tp)
		delete(st.seekEpoch, tp)
		delete(st.pendingSeeks, tp)
	}
	st.ready = slices.DeleteFunc(st.ready, func(b *batch) bool { return revoked[b.tp] })
	if st.retryBatch != nil {
		// the records of partitions still assigned are redelivered; the others are fetched by their new owner
		st.retryBatch = slices.DeleteFunc(st.retryBatch, func(r *connect.SinkRecord) bool {
			return revoked[connect.TopicPartition{Topic: r.OriginalTopic, Partition: r.OriginalPartition}]
		})
	}
	for k := range st.raw {
		if revoked[connect.TopicPartition{Topic: k.topic, Partition: k.partition}] {
			delete(st.raw, k)
		}
	}
	if len(st.assignment) == 0 {
		st.inSession = false
		st.retryBatch, st.idleAt = nil, time.Time{}
		st.ready = nil
	}
	return err
}

// commitOffsets commits offsets to the group, with their metadata, and returns the partitions it
// committed.
func (st *sinkTask) commitOffsets(ctx context.Context, offsets map[connect.TopicPartition]connect.OffsetAndMetadata) (map[connect.TopicPartition]bool, error) {
	m := map[string]map[int32]kgo.EpochOffset{}
	for tp, om := range offsets {
		setOffset(m, tp.Topic, tp.Partition, om.Offset)
	}
	// The client commits its member id as metadata; the JVM worker commits the task's (empty by default).
	ctx = kgo.PreCommitFnContext(ctx, func(req *kmsg.OffsetCommitRequest) error {
		for i := range req.Topics {
			t := &req.Topics[i]
			for j := range t.Partitions {
				p := &t.Partitions[j]
				md := offsets[connect.TopicPartition{Topic: t.Topic, Partition: p.Partition}].Metadata
				p.Metadata = &md
			}
		}
		return nil
	})
	committed := map[connect.TopicPartition]bool{}
	var cerr error
	st.client.CommitOffsetsSync(ctx, m, func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			topic := t.Topic
			if topic == "" { // OffsetCommit v10+ answers by topic id
				topic = topicByID(req, t.TopicID)
			}
			for _, p := range t.Partitions {
				if p.ErrorCode == 0 {
					committed[connect.TopicPartition{Topic: topic, Partition: p.Partition}] = true
				} else if cerr == nil {
					cerr = fmt.Errorf("committing %s-%d: %w", topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
				}
			}
		}
	})
	return committed, cerr
}

func topicByID(req *kmsg.OffsetCommitRequest, id [16]byte) string {
	for _, t := range req.Topics {
		if t.TopicID == id {
			return t.Topic
		}
	}
	return ""
}
