package kafka

import (
	"context"
	"time"

	"github.com/IBM/sarama"

	"github.com/connectd/connectd/connect"
)

// PluginClients is the worker's Kafka client factory as plugins see it (connect.KafkaClients).
type PluginClients struct{}

var _ connect.KafkaClients = PluginClients{}

// connectTimeout bounds connecting and authenticating a plugin's client.
const connectTimeout = 30 * time.Second

func (PluginClients) NewProducer(props map[string]string) (connect.Producer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return NewProducer(ctx, props)
}

func (PluginClients) NewTransactionalProducer(props map[string]string, transactionalID string) (connect.TransactionalProducer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return NewTransactionalProducer(ctx, props, transactionalID)
}

func (PluginClients) NewTopicAdmin(props map[string]string) (connect.TopicAdmin, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return NewTopicAdmin(ctx, props)
}

func (PluginClients) CheckProducerConfig(props map[string]string) error {
	if _, err := ClientOpts(props); err != nil {
		return err
	}
	_, err := ProducerOpts(props)
	return err
}

// The sarama clients below serve only the Iceberg sink's control topic (connect.SaramaClients).

func (PluginClients) Config(props map[string]string) (*sarama.Config, error) { return NewConfig(props) }

func (PluginClients) ApplyProducer(cfg *sarama.Config, props map[string]string) error {
	return ApplyProducer(cfg, props)
}

func (PluginClients) Brokers(props map[string]string) []string { return Brokers(props) }

func (PluginClients) NewClient(brokers []string, cfg *sarama.Config) (sarama.Client, error) {
	return NewClient(brokers, cfg)
}
