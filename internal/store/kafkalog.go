// Package store keeps the distributed herder's state in the JVM's internal topics: a compacted-topic log
// (KafkaBasedLog), the config store (KafkaConfigBackingStore) and the status store (KafkaStatusBackingStore),
// with the JVM's keys and JSON values so a JVM Connect cluster's topics can be taken over and back.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/backoff"
	"github.com/connectd/connectd/internal/kafka"
)

// TopicSpec describes an internal topic as the JVM's worker keys do.
type TopicSpec struct {
	Name        string
	Property    string // worker key that named it, for error messages (config.storage.topic, ...)
	Partitions  int32  // -1: broker default
	Replication int16  // -1: broker default
	Configs     map[string]string
	// SinglePartition refuses an existing topic with more than one partition (the config topic).
	SinglePartition bool
}

// EnsureTopic creates the topic compacted if missing, and refuses an existing one whose cleanup.policy is not
// exactly "compact" (or, for the config topic, that has more than one partition), as the JVM worker does.
func EnsureTopic(ctx context.Context, cl *kgo.Client, spec TopicSpec) error {
	admin := kadm.NewClient(cl)
	parts, exists, err := topicPartitions(ctx, admin, spec.Name)
	if err != nil {
		return fmt.Errorf("store: describing topic %s: %w", spec.Name, err)
	}
	if !exists {
		configs := map[string]string{}
		for k, v := range spec.Configs {
			if k == "cleanup.policy" { // the JVM ignores a cleanup.policy given through <prefix>.*
				continue
			}
			configs[k] = v
		}
		configs["cleanup.policy"] = "compact"
		n := spec.Partitions
		if spec.SinglePartition {
			n = 1
		}
		if err := kafka.EnsureTopic(ctx, cl, connect.TopicSpec{Name: spec.Name, Partitions: n, ReplicationFactor: spec.Replication, Configs: configs}); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		// a new topic takes a moment to show up everywhere
		for i := 0; ; i++ {
			parts, exists, err = topicPartitions(ctx, admin, spec.Name)
			if err == nil && exists && parts > 0 {
				break
			}
			if i == 50 {
				return fmt.Errorf("store: topic %s did not appear after creation: %v", spec.Name, err)
			}
			if serr := backoff.Sleep(ctx, 200*time.Millisecond); serr != nil {
				return fmt.Errorf("store: waiting for topic %s: %w", spec.Name, serr)
			}
		}
	}
	if spec.SinglePartition && parts > 1 {
		return fmt.Errorf("Topic '%s' supplied via the '%s' property is required to have a single partition in order to guarantee consistency of connector configurations, but found %d partitions.",
			spec.Name, spec.Property, parts)
	}
	var policy string
	for i := 0; ; i++ {
		policy, err = topicConfig(ctx, admin, spec.Name, "cleanup.policy")
		if err == nil {
			break
		}
		if i == 50 || !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("store: describing topic %s: %w", spec.Name, err)
		}
		if serr := backoff.Sleep(ctx, 200*time.Millisecond); serr != nil {
			return fmt.Errorf("store: describing topic %s: %w", spec.Name, errors.Join(err, serr))
		}
	}
	if policy != "compact" {
		return fmt.Errorf("Topic '%s' supplied via the '%s' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of connector configurations, but found the topic currently has 'cleanup.policy=%s'. Continuing would likely result in eventually losing connector configurations and problems restarting this Connect cluster in the future. Change the '%s' property in the Connect worker configurations to use a topic with 'cleanup.policy=compact'.",
			spec.Name, spec.Property, policy, spec.Property)
	}
	return nil
}

// Record is one record read from a log.
type Record struct {
	Key       string
	Value     []byte // nil = tombstone
	Partition int32
	Offset    int64
	Timestamp time.Time
}

// Log is a KafkaBasedLog: it consumes every partition of a topic from the beginning, hands each record to
// apply (serially, in offset order per partition), and produces with acks=all.
type Log struct {
	client  *kgo.Client // producer, offsets and metadata
	cclient *kgo.Client // consumer only: its fetches wait up to fetch.max.wait.ms on the broker
	props   map[string]string
	topic   string
	apply   func(Record)

	mu       sync.Mutex
	cond     *sync.Cond
	next     map[int32]int64 // next offset to read per partition
	written  map[int32]int64 // per partition, the offset after the last write this log had acknowledged
	applyMu  sync.Mutex
	stop     context.CancelFunc
	wg       sync.WaitGroup
	failures error
}

// logProducer is the producer of the JVM's KafkaBasedLog for the internal topics: acks=all, no idempotence
// and one request in flight, so that records stay in order through retries. Records are partitioned by the
// murmur2 hash of their keys, as the Java client's default partitioner, so keys land on the partitions a JVM
// worker would use.
var logProducer = map[string]string{"acks": "all", "enable.idempotence": "false"}

// NewLog prepares a log on topic with its own clients built from the worker's client properties (the same
// translation as every other client). The consumer has a client (connections) of its own, as the JVM's
// KafkaBasedLog has a producer and a consumer, so that a write does not wait behind a long-polling fetch.
func NewLog(props map[string]string, topic string, apply func(Record)) (*Log, error) {
	popts, err := kafka.ProducerOpts(logProducer)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	client, err := kafka.Open(ctx, props, append(popts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))...)
	if err != nil {
		return nil, err
	}
	l := &Log{client: client, props: props, topic: topic, apply: apply, next: map[int32]int64{}, written: map[int32]int64{}}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// Client is the log's own client (for admin calls).
func (l *Log) Client() *kgo.Client { return l.client }

// endOffsets lists the end offset of every partition of the topic; it fails unless every partition answers.
func (l *Log) endOffsets(ctx context.Context) (map[int32]int64, error) {
	admin := kadm.NewClient(l.client)
	parts, exists, err := topicPartitions(ctx, admin, l.topic)
	if err != nil {
		return nil, err
	}
	if !exists || parts == 0 {
		return nil, fmt.Errorf("store: topic %s: %w", l.topic, kerr.UnknownTopicOrPartition)
	}
	listed, err := admin.ListEndOffsets(ctx, l.topic)
	if err != nil {
		return nil, err
	}
	ends := map[int32]int64{}
	for p := int32(0); p < int32(parts); p++ {
		o, ok := listed.Lookup(l.topic, p)
		if !ok {
			return nil, fmt.Errorf("store: topic %s partition %d: no end offset", l.topic, p)
		}
		if o.Err != nil {
			return nil, fmt.Errorf("store: topic %s partition %d: %w", l.topic, p, o.Err)
		}
		ends[p] = o.Offset
	}
	return ends, nil
}

// Start begins consuming every partition from the earliest offset and returns once everything present at
// the start has been applied (read to end before serving).
func (l *Log) Start(ctx context.Context) error {
	// a just-created topic may not have leaders everywhere yet: wait until every partition answers
	var ends map[int32]int64
	var err error
	for i := 0; ; i++ {
		if ends, err = l.endOffsets(ctx); err == nil {
			break
		}
		if i == 100 {
			return err
		}
		if serr := backoff.Sleep(ctx, 200*time.Millisecond); serr != nil {
			return errors.Join(err, serr)
		}
	}
	parts := map[int32]kgo.Offset{}
	for p := range ends {
		parts[p] = kgo.NewOffset().AtStart()
		l.mu.Lock()
		l.next[p] = 0
		l.mu.Unlock()
	}
	copts, err := kafka.ClientOpts(l.props)
	if err != nil {
		return err
	}
	// the JVM consumer's fetch.max.wait.ms, and read_uncommitted as the JVM's KafkaBasedLog without
	// exactly-once source support
	copts = append(copts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{l.topic: parts}), kgo.FetchMaxWait(500*time.Millisecond))
	if l.cclient, err = kgo.NewClient(copts...); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	l.wg.Add(1)
	go l.consume(rctx)
	return l.readTo(ctx, ends)
}

func (l *Log) consume(ctx context.Context) {
	defer l.wg.Done()
	for {
		fetches := l.cclient.PollFetches(ctx)
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return
		}
		fetches.EachError(func(_ string, _ int32, err error) {
			l.mu.Lock()
			l.failures = err
			l.mu.Unlock()
		})
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) == 0 {
				return
			}
			l.applyMu.Lock()
			for _, m := range p.Records {
				l.apply(Record{Key: string(m.Key), Value: m.Value, Partition: m.Partition, Offset: m.Offset, Timestamp: m.Timestamp})
			}
			l.applyMu.Unlock()
			l.mu.Lock()
			l.next[p.Partition] = p.Records[len(p.Records)-1].Offset + 1
			l.cond.Broadcast()
			l.mu.Unlock()
		})
	}
}

// ReadWritten waits until every record this log wrote (and had acknowledged) before the call has been applied:
// a writer's read-your-write without asking the broker for the end offsets.
func (l *Log) ReadWritten(ctx context.Context) error {
	l.mu.Lock()
	ends := make(map[int32]int64, len(l.written))
	for p, off := range l.written {
		ends[p] = off
	}
	l.mu.Unlock()
	return l.readTo(ctx, ends)
}

// ReadToEnd waits until every record written before the call has been applied.
func (l *Log) ReadToEnd(ctx context.Context) error {
	l.mu.Lock()
	reading := len(l.next) > 0
	l.mu.Unlock()
	if !reading {
		return nil
	}
	ends, err := l.endOffsets(ctx)
	for i := 0; err != nil && i < 20 && backoff.Sleep(ctx, 100*time.Millisecond) == nil; i++ {
		ends, err = l.endOffsets(ctx)
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	for p := range ends {
		if _, read := l.next[p]; !read {
			delete(ends, p) // added after Start: not consumed by this log, as the JVM's
		}
	}
	l.mu.Unlock()
	return l.readTo(ctx, ends)
}

// readTo waits until the consumer reached ends (next offset per partition).
func (l *Log) readTo(ctx context.Context, ends map[int32]int64) error {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			l.mu.Lock()
			l.cond.Broadcast()
			l.mu.Unlock()
		case <-done:
		}
	}()
	defer close(done)
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		caught := true
		for p, end := range ends {
			if l.next[p] < end {
				caught = false
			}
		}
		if caught {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.cond.Wait()
	}
}

// ErrWriteTimeout is returned when a write was not acknowledged within the log's write timeout.
var ErrWriteTimeout = errors.New("store: write not acknowledged in time")

func (l *Log) record(key string, value []byte) *kgo.Record {
	return &kgo.Record{Topic: l.topic, Key: []byte(key), Value: value}
}

// Send writes key=value (nil value = tombstone) and waits for the broker's acknowledgement.
func (l *Log) Send(key string, value []byte) (int32, int64, error) {
	r := l.record(key, value)
	if err := l.produce(context.Background(), r); err != nil {
		return 0, 0, err
	}
	return r.Partition, r.Offset, nil
}

// SendAll writes records in order in one batch: one produce request per partition (one request in flight,
// so the order holds through retries) instead of one round trip per record.
func (l *Log) SendAll(recs []Record) error { return l.SendAllContext(context.Background(), recs) }

// SendAllContext is SendAll that stops waiting for the acknowledgement when ctx ends (ErrWriteTimeout): the
// write may still land after that, and callers treat it as an unknown outcome.
func (l *Log) SendAllContext(ctx context.Context, recs []Record) error {
	rs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		rs[i] = l.record(r.Key, r.Value)
	}
	return l.produce(ctx, rs...)
}

// produce sends records and waits for their acknowledgement until ctx ends. The records themselves are
// bounded by the JVM producer's delivery.timeout.ms, not by ctx: a write the caller stopped waiting for may
// still land.
func (l *Log) produce(ctx context.Context, rs ...*kgo.Record) error {
	delivery, err := kafka.DeliveryTimeout(nil)
	if err != nil {
		return err
	}
	send := func() error {
		dctx, cancel := context.WithTimeout(context.Background(), delivery)
		defer cancel()
		err := l.client.ProduceSync(dctx, rs...).FirstErr()
		if err == nil {
			l.wrote(rs...)
		}
		return err
	}
	if ctx.Done() == nil {
		return send()
	}
	done := make(chan error, 1)
	go func() { done <- send() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %s: %w", ErrWriteTimeout, l.topic, ctx.Err())
	}
}

// wrote records acknowledged writes for ReadWritten.
func (l *Log) wrote(rs ...*kgo.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range rs {
		if r.Offset+1 > l.written[r.Partition] {
			l.written[r.Partition] = r.Offset + 1
		}
	}
}

// Close stops consuming and closes the clients.
func (l *Log) Close() error {
	if l.stop != nil {
		l.stop()
	}
	if l.cclient != nil {
		l.cclient.Close()
	}
	l.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = l.client.Flush(ctx)
	l.client.Close()
	return nil
}
