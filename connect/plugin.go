package connect

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"
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
	// CheckProducerConfig reports the error NewProducer would give props' settings, without connecting.
	CheckProducerConfig(props map[string]string) error

	SaramaClients
}

// SaramaClients hands out IBM/sarama clients. Its one remaining user is the Iceberg sink's control
// topic; new code uses Producer, TransactionalProducer and TopicAdmin, and these methods go with it.
type SaramaClients interface {
	// Config translates client properties into a sarama configuration.
	Config(props map[string]string) (*sarama.Config, error)
	// ApplyProducer applies the producer properties of props (acks, compression.type, linger.ms, ...).
	ApplyProducer(cfg *sarama.Config, props map[string]string) error
	// Brokers is the bootstrap.servers list of props.
	Brokers(props map[string]string) []string
	// NewClient connects a client; a failure says which brokers and, when it can tell, why.
	NewClient(brokers []string, cfg *sarama.Config) (sarama.Client, error)
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
}

// TopicSpec describes a topic to create when it does not exist.
type TopicSpec struct {
	Name              string
	Partitions        int32             // -1: the broker's num.partitions
	ReplicationFactor int16             // -1: the broker's default.replication.factor
	Configs           map[string]string // topic configs (cleanup.policy, ...)
}

// TopicAdmin manages topics.
type TopicAdmin interface {
	// EnsureTopic creates the topic unless it exists (the JVM's TopicAdmin.createOrFindTopics); an
	// existing topic is left as it is.
	EnsureTopic(ctx context.Context, spec TopicSpec) error
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
// stays registered for the life of the process unless the plugin unregisters it, so a plugin
// registers once per process and labels its series with the connector (and task) itself.
type PluginMetrics interface {
	// Register publishes c; it fails when c describes a metric that is already published.
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
