package kafkatest

import (
	"time"

	"github.com/IBM/sarama"
)

// NewConfig returns a sarama config for the test broker, for the tests that still drive sarama
// clients: Kafka 4 protocol version (Kafka 4 removed the old versions, KIP-896), producer
// successes returned, acks=all, consumers starting at the oldest offset, and admin/metadata
// retries suited to a freshly started broker. The helpers of this package use franz-go.
func NewConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.ClientID = "kafkatest"
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 10
	cfg.Producer.Retry.Backoff = 200 * time.Millisecond
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Return.Errors = true
	cfg.Metadata.Retry.Max = 10
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	cfg.Admin.Retry.Max = 10
	cfg.Admin.Retry.Backoff = 200 * time.Millisecond
	cfg.Admin.Timeout = 30 * time.Second
	return cfg
}
