package kafka

import (
	"github.com/IBM/sarama"

	"github.com/connectd/connectd/connect"
)

// PluginClients is the worker's Kafka client factory as plugins see it (connect.KafkaClients).
type PluginClients struct{}

var _ connect.KafkaClients = PluginClients{}

func (PluginClients) Config(props map[string]string) (*sarama.Config, error) { return NewConfig(props) }

func (PluginClients) ApplyProducer(cfg *sarama.Config, props map[string]string) error {
	return ApplyProducer(cfg, props)
}

func (PluginClients) Brokers(props map[string]string) []string { return Brokers(props) }

func (PluginClients) NewClient(brokers []string, cfg *sarama.Config) (sarama.Client, error) {
	return NewClient(brokers, cfg)
}
