package connect

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PluginRuntime is what the runtime lends a plugin beyond its configuration: a metrics handle (the
// JVM's pluginMetrics(), KIP-877) and a factory for Kafka clients that take the JVM's client
// properties. The runtime's ConnectorContext and SinkTaskContext implement it; a plugin asserts
// for it and does without when it is missing.
type PluginRuntime interface {
	PluginMetrics() PluginMetrics
	KafkaClients() KafkaClients
}

// KafkaClients builds Kafka clients the way the worker builds its own, from the JVM's client
// properties (bootstrap.servers, client.id, security.protocol, ssl.*, sasl.*, acks, ...). Unknown or
// unsupported security settings are an error, never ignored.
type KafkaClients interface {
	// NewProducer connects a producer configured by the producer properties of props.
	NewProducer(props map[string]string) (Producer, error)
	// NewTransactionalProducer connects a producer that writes in transactions under transactionalID
	// (the JVM's transactional.id): starting it fences older producers of the same id.
	NewTransactionalProducer(props map[string]string, transactionalID string) (TransactionalProducer, error)
	// NewTopicAdmin connects an admin client.
	NewTopicAdmin(props map[string]string) (TopicAdmin, error)
	// NewTopicReader connects a consumer that reads partitions of one topic outside any consumer
	// group, from the positions spec names (resolved before it returns).
	NewTopicReader(props map[string]string, spec TopicReaderSpec) (TopicReader, error)
	// CheckProducerConfig reports the error NewProducer would give props' settings, without connecting.
	CheckProducerConfig(props map[string]string) error
}

// AnyPartition in ProducerRecord.Partition leaves the choice to the producer: the hash of the key, as
// the JVM's default partitioner, or any partition for a record without a key.
const AnyPartition int32 = -1

// ProducerRecord is one record to produce. Key and Value are sent as they are (nil: a null key or value).
type ProducerRecord struct {
	Topic     string
	Partition int32 // AnyPartition or a partition of Topic
	Key       []byte
	Value     []byte
	Headers   []RecordHeader
	Timestamp time.Time // zero: the time of sending
}

// RecordHeader is one header of a produced record, its value raw bytes.
type RecordHeader struct {
	Key   string
	Value []byte
}

// Producer writes records to Kafka. It is safe for concurrent use.
type Producer interface {
	// Produce sends records and returns once each is acknowledged (per acks) or failed; records of one
	// partition are written in order. A failure is a *ProduceError.
	Produce(ctx context.Context, records ...*ProducerRecord) error
	// Close waits for records in flight and releases the connections.
	Close()
}

// TransactionalProducer writes records in transactions: records produced between BeginTransaction
// and CommitTransaction become visible to read_committed consumers together, or not at all.
type TransactionalProducer interface {
	Producer
	BeginTransaction() error
	// CommitTransaction flushes the transaction's records and commits it.
	CommitTransaction(ctx context.Context) error
	// AbortTransaction drops the transaction's records.
	AbortTransaction(ctx context.Context) error
	// SendOffsetsToTransaction commits offsets for group with the transaction (the JVM's
	// sendOffsetsToTransaction with the group's id alone, outside its generations): they count once
	// it commits, never when it aborts. The transaction must have produced a record first.
	SendOffsetsToTransaction(ctx context.Context, group string, offsets []TopicPartitionOffset) error
}

// ErrTransactionOutcomeUnknown is wrapped by a CommitTransaction failure after which the transaction may
// have committed or not (the request was sent and no answer came); any other failure did not commit it.
var ErrTransactionOutcomeUnknown = errors.New("the transaction's outcome is unknown")

// TopicPartitionOffset is an offset in one partition.
type TopicPartitionOffset struct {
	Topic     string
	Partition int32
	Offset    int64
}

// TopicSpec describes a topic to create when it does not exist.
type TopicSpec struct {
	Name              string
	Partitions        int32             // -1: the broker's num.partitions
	ReplicationFactor int16             // -1: the broker's default.replication.factor
	Configs           map[string]string // topic configs (cleanup.policy, ...)
}

// TopicAdmin manages topics and the offsets of consumer groups that commit without joining (the JVM's Admin).
type TopicAdmin interface {
	// EnsureTopic creates the topic unless it exists (the JVM's TopicAdmin.createOrFindTopics); an
	// existing topic is left as it is.
	EnsureTopic(ctx context.Context, spec TopicSpec) error
	// Metadata reports the named topics that exist, or every topic when none is named.
	Metadata(ctx context.Context, topics ...string) (TopicMetadata, error)
	// GroupOffsets are the offsets group committed on topic's partitions; a partition without one is
	// left out.
	GroupOffsets(ctx context.Context, group, topic string) (map[int32]int64, error)
	// CommitGroupOffsets commits offsets for group outside its generations (the JVM's
	// Admin.alterConsumerGroupOffsets): the broker refuses them while the group has members.
	CommitGroupOffsets(ctx context.Context, group string, offsets []TopicPartitionOffset) error
	// GroupMembers is how many members the classic group has (0 for an empty or unknown group); an error when
	// it cannot tell (a group of the consumer protocol, KIP-848, is not described by this request).
	GroupMembers(ctx context.Context, group string) (int, error)
	Close()
}

// TopicMetadata is what the cluster reports of its brokers and topics.
type TopicMetadata struct {
	Brokers    int                // brokers in the cluster
	Partitions map[string][]int32 // each existing topic's partitions, ascending
}

// Offsets a ReadPosition names besides the offsets of records.
const (
	ReadFromEnd   int64 = -1 // the next record written (of read_committed readers: after the last stable offset)
	ReadFromStart int64 = -2 // the oldest record the partition keeps
)

// ReadPosition is where a TopicReader starts in a partition: at Offset (an offset, ReadFromEnd or
// ReadFromStart), or, when After is set, at the first record stamped at or after it (the end when none
// is). An offset the partition no longer holds reads from the start.
type ReadPosition struct {
	Offset int64
	After  time.Time
}

// TopicReaderSpec says what a TopicReader reads.
type TopicReaderSpec struct {
	Topic string
	// Partitions to read and where to start; nil: every partition of Topic, from its end.
	Partitions map[int32]ReadPosition
	// ReadCommitted reads as isolation.level=read_committed: records of aborted transactions are
	// skipped, and reading stops at a transaction still open.
	ReadCommitted bool
}

// ConsumedRecord is one record a TopicReader read.
type ConsumedRecord struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp time.Time
}

// TopicReader reads partitions of a topic, each in offset order, outside any consumer group. Poll is
// for one goroutine; Close may be called while it waits.
type TopicReader interface {
	// Poll waits until records arrive and returns them; it fails when ctx ends or the reader is closed.
	Poll(ctx context.Context) ([]ConsumedRecord, error)
	Close()
}

// ProduceError is the first record a Produce call could not write.
type ProduceError struct {
	Topic     string
	Partition int32
	Failed    int // records of the call that failed
	Total     int // records of the call
	// Fatal reports that sending the record again cannot succeed (too large, no such partition, not
	// authorized, invalid topic); otherwise the failure may pass (a broker down, a timeout).
	Fatal bool
	Err   error
}

func (e *ProduceError) Error() string {
	return fmt.Sprintf("%d of %d records failed, first to %s-%d: %v", e.Failed, e.Total, e.Topic, e.Partition, e.Err)
}

func (e *ProduceError) Unwrap() error { return e.Err }

// PluginMetrics publishes a plugin's metrics beside the worker's own (GET /metrics). A collector
// stays registered until the plugin unregisters it, so a plugin registers one per worker (kept in the
// worker's SharedValues, withdrawn when it closes) and labels its series with the connector (and task)
// itself.
type PluginMetrics interface {
	// Register publishes c. A collector that describes exactly the families of one already published
	// (the same plugin on another worker of the process) is published with it: a series both report is
	// published once, as the first registered reports it. Register fails when c describes a family that is
	// published with another description or in another set of families.
	Register(c MetricCollector) error
	// Unregister withdraws c; it reports whether c was registered.
	Unregister(c MetricCollector) bool
}

// MetricKind is how a metric's value is read: a counter only grows, a gauge goes up and down.
type MetricKind int

const (
	CounterMetric MetricKind = iota
	GaugeMetric
)

// MetricDesc describes one metric family: its name, help text, kind and label names.
type MetricDesc struct {
	Name   string
	Help   string
	Kind   MetricKind
	Labels []string
}

// MetricCollector reports metrics when they are read (at each scrape); it keeps nothing on the record path.
type MetricCollector interface {
	// Describe lists every family Collect may report.
	Describe() []*MetricDesc
	// Collect reports each series: its family, value and label values in the order of the family's Labels.
	Collect(report func(desc *MetricDesc, value float64, labelValues ...string))
}
