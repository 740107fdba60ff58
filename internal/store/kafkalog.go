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

	"github.com/IBM/sarama"

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
func EnsureTopic(ctx context.Context, admin sarama.ClusterAdmin, spec TopicSpec) error {
	metas, err := admin.DescribeTopics([]string{spec.Name})
	if err != nil {
		return err
	}
	exists := len(metas) == 1 && !errors.Is(metas[0].Err, sarama.ErrUnknownTopicOrPartition) && metas[0].Err == sarama.ErrNoError
	if !exists {
		entries := map[string]*string{}
		for k, v := range spec.Configs {
			if k == "cleanup.policy" { // the JVM ignores a cleanup.policy given through <prefix>.*
				continue
			}
			v := v
			entries[k] = &v
		}
		compact := "compact"
		entries["cleanup.policy"] = &compact
		parts := spec.Partitions
		if spec.SinglePartition {
			parts = 1
		}
		err := admin.CreateTopic(spec.Name, &sarama.TopicDetail{NumPartitions: parts, ReplicationFactor: spec.Replication, ConfigEntries: entries}, false)
		if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
			var te *sarama.TopicError
			if !errors.As(err, &te) || te.Err != sarama.ErrTopicAlreadyExists {
				return fmt.Errorf("store: creating topic %s: %w", spec.Name, err)
			}
		}
		// a new topic takes a moment to show up everywhere
		for i := 0; ; i++ {
			metas, err = admin.DescribeTopics([]string{spec.Name})
			if err == nil && len(metas) == 1 && metas[0].Err == sarama.ErrNoError && len(metas[0].Partitions) > 0 {
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
	if spec.SinglePartition && len(metas) == 1 && len(metas[0].Partitions) > 1 {
		return fmt.Errorf("Topic '%s' supplied via the '%s' property is required to have a single partition in order to guarantee consistency of connector configurations, but found %d partitions.",
			spec.Name, spec.Property, len(metas[0].Partitions))
	}
	var cfg []sarama.ConfigEntry
	for i := 0; ; i++ {
		cfg, err = describeTopicConfig(admin, sarama.ConfigResource{Type: sarama.TopicResource, Name: spec.Name, ConfigNames: []string{"cleanup.policy"}})
		if err == nil {
			break
		}
		if i == 50 || !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return fmt.Errorf("store: describing topic %s: %w", spec.Name, err)
		}
		if serr := backoff.Sleep(ctx, 200*time.Millisecond); serr != nil {
			return fmt.Errorf("store: describing topic %s: %w", spec.Name, errors.Join(err, serr))
		}
	}
	policy := ""
	for _, e := range cfg {
		if e.Name == "cleanup.policy" {
			policy = e.Value
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
	client   sarama.Client // producer, offsets and metadata
	cclient  sarama.Client // consumer only: its fetches wait up to fetch.max.wait.ms on the broker
	topic    string
	apply    func(Record)
	producer sarama.SyncProducer
	consumer sarama.Consumer

	mu       sync.Mutex
	cond     *sync.Cond
	next     map[int32]int64 // next offset to read per partition
	written  map[int32]int64 // per partition, the offset after the last write this log had acknowledged
	applyMu  sync.Mutex
	stop     context.CancelFunc
	wg       sync.WaitGroup
	failures error
}

// NewLog prepares a log on topic with its own clients built from brokers and base (cloned): producer acks=all,
// one request in flight, no idempotence, and the Java client's murmur2 partitioner so keys land on the
// partitions a JVM worker would use. The consumer has a client (connections) of its own, as the JVM's
// KafkaBasedLog has a producer and a consumer: with one request in flight per connection, a write sharing
// the consumer's connection would wait behind its long-polling fetch (up to 500 ms per write).
func NewLog(brokers []string, base *sarama.Config, topic string, apply func(Record)) (*Log, error) {
	c := *base
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	c.Producer.Idempotent = false
	c.Net.MaxOpenRequests = 1
	c.Producer.Retry.Max = 10
	c.Producer.Partitioner = sarama.NewMurmur2Partitioner
	c.Consumer.Offsets.AutoCommit.Enable = false
	c.Consumer.Return.Errors = true
	client, err := kafka.NewClient(brokers, &c)
	if err != nil {
		return nil, err
	}
	cclient, err := kafka.NewClient(brokers, &c)
	if err != nil {
		client.Close()
		return nil, err
	}
	l := &Log{client: client, cclient: cclient, topic: topic, apply: apply, next: map[int32]int64{},
		written: map[int32]int64{}}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// Client is the log's own client (for admin calls).
func (l *Log) Client() sarama.Client { return l.client }

// Start begins consuming every partition from the earliest offset and returns once everything present at
// the start has been applied (read to end before serving).
func (l *Log) Start(ctx context.Context) error {
	// a just-created topic may not have leaders everywhere yet: wait until every partition answers
	var parts []int32
	var err error
	for i := 0; ; i++ {
		_ = l.client.RefreshMetadata(l.topic)
		if parts, err = l.client.Partitions(l.topic); err == nil {
			for _, p := range parts {
				if _, err = l.client.GetOffset(l.topic, p, sarama.OffsetNewest); err != nil {
					break
				}
			}
		}
		if err == nil {
			break
		}
		if i == 100 {
			return err
		}
		if serr := backoff.Sleep(ctx, 200*time.Millisecond); serr != nil {
			return errors.Join(err, serr)
		}
	}
	if l.consumer, err = sarama.NewConsumerFromClient(l.cclient); err != nil {
		return err
	}
	if l.producer, err = sarama.NewSyncProducerFromClient(l.client); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	for _, p := range parts {
		pc, err := l.consumer.ConsumePartition(l.topic, p, sarama.OffsetOldest)
		if err != nil {
			cancel()
			return err
		}
		l.mu.Lock()
		l.next[p] = 0
		l.mu.Unlock()
		l.wg.Add(1)
		go l.consume(rctx, p, pc)
	}
	return l.ReadToEnd(ctx)
}

func (l *Log) consume(ctx context.Context, p int32, pc sarama.PartitionConsumer) {
	defer l.wg.Done()
	defer pc.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-pc.Errors():
			if !ok {
				return
			}
			l.mu.Lock()
			l.failures = err
			l.mu.Unlock()
		case m, ok := <-pc.Messages():
			if !ok {
				return
			}
			r := Record{Key: string(m.Key), Value: m.Value, Partition: m.Partition, Offset: m.Offset, Timestamp: m.Timestamp}
			l.applyMu.Lock()
			l.apply(r)
			l.applyMu.Unlock()
			l.mu.Lock()
			l.next[p] = m.Offset + 1
			l.cond.Broadcast()
			l.mu.Unlock()
		}
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
	ends := map[int32]int64{}
	l.mu.Lock()
	parts := make([]int32, 0, len(l.next))
	for p := range l.next {
		parts = append(parts, p)
	}
	l.mu.Unlock()
	for _, p := range parts {
		off, err := l.client.GetOffset(l.topic, p, sarama.OffsetNewest)
		for i := 0; err != nil && i < 20 && backoff.Sleep(ctx, 100*time.Millisecond) == nil; i++ {
			_ = l.client.RefreshMetadata(l.topic)
			off, err = l.client.GetOffset(l.topic, p, sarama.OffsetNewest)
		}
		if err != nil {
			return err
		}
		ends[p] = off
	}
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

func (l *Log) message(key string, value []byte) *sarama.ProducerMessage {
	msg := &sarama.ProducerMessage{Topic: l.topic, Key: sarama.StringEncoder(key)}
	if value != nil {
		msg.Value = sarama.ByteEncoder(value)
	}
	return msg
}

// Send writes key=value (nil value = tombstone) and waits for the broker's acknowledgement.
func (l *Log) Send(key string, value []byte) (int32, int64, error) {
	msg := l.message(key, value)
	var part int32
	var off int64
	err := l.bounded(context.Background(), func() (err error) {
		if part, off, err = l.producer.SendMessage(msg); err == nil {
			l.wrote(msg)
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return part, off, nil
}

// SendAll writes records in order in one batch: one produce request per partition (one request in flight,
// so the order holds through retries) instead of one round trip per record.
func (l *Log) SendAll(recs []Record) error { return l.SendAllContext(context.Background(), recs) }

// SendAllContext is SendAll that stops waiting for the acknowledgement when ctx ends (ErrWriteTimeout): the
// write may still land after that, and callers treat it as an unknown outcome.
func (l *Log) SendAllContext(ctx context.Context, recs []Record) error {
	msgs := make([]*sarama.ProducerMessage, len(recs))
	for i, r := range recs {
		msgs[i] = l.message(r.Key, r.Value)
	}
	return l.bounded(ctx, func() error {
		err := l.producer.SendMessages(msgs)
		if err == nil {
			l.wrote(msgs...)
		}
		return err
	})
}

// wrote records acknowledged writes for ReadWritten.
func (l *Log) wrote(msgs ...*sarama.ProducerMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		if m.Offset+1 > l.written[m.Partition] {
			l.written[m.Partition] = m.Offset + 1
		}
	}
}

// bounded runs a producer call, waiting for it until ctx ends.
func (l *Log) bounded(ctx context.Context, send func() error) error {
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

// Close stops consuming and closes the clients.
func (l *Log) Close() error {
	if l.stop != nil {
		l.stop()
	}
	l.wg.Wait()
	if l.producer != nil {
		_ = l.producer.Close()
	}
	if l.consumer != nil {
		_ = l.consumer.Close()
	}
	_ = l.cclient.Close()
	return l.client.Close()
}
