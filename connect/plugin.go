package connect

import (
	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"
)

// PluginRuntime is what the runtime lends a plugin beyond its configuration: a metrics handle (the
// JVM's pluginMetrics(), KIP-877) and a factory for Kafka clients that take the JVM's client
// properties. The runtime's ConnectorContext and SinkTaskContext implement it; a plugin asserts
// for it and does without when it is missing.
type PluginRuntime interface {
	PluginMetrics() PluginMetrics
	KafkaClients() KafkaClients
}

// PluginMetrics publishes a plugin's metrics beside the worker's own (GET /metrics). A collector
// stays registered for the life of the process unless the plugin unregisters it, so a plugin
// registers once per process and labels its series with the connector (and task) itself.
type PluginMetrics interface {
	prometheus.Registerer
}

// KafkaClients builds Kafka clients the way the worker builds its own, from the JVM's client
// properties (bootstrap.servers, client.id, security.protocol, ssl.*, sasl.*, ...).
type KafkaClients interface {
	// Config translates client properties into a sarama configuration; unknown or unsupported
	// security settings are an error, never ignored.
	Config(props map[string]string) (*sarama.Config, error)
	// ApplyProducer applies the producer properties of props (acks, compression.type, linger.ms, ...).
	ApplyProducer(cfg *sarama.Config, props map[string]string) error
	// Brokers is the bootstrap.servers list of props.
	Brokers(props map[string]string) []string
	// NewClient connects a client; a failure says which brokers and, when it can tell, why.
	NewClient(brokers []string, cfg *sarama.Config) (sarama.Client, error)
}
