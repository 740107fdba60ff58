package kafka

import (
	"context"
	"time"

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

func (PluginClients) NewTopicReader(props map[string]string, spec connect.TopicReaderSpec) (connect.TopicReader, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	return NewTopicReader(ctx, props, spec)
}

func (PluginClients) CheckProducerConfig(props map[string]string) error {
	if _, err := ClientOpts(props); err != nil {
		return err
	}
	_, err := ProducerOpts(props)
	return err
}
