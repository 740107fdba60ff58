package kafka

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// NewClient is sarama.NewClient with connection failures explained (see ExplainConnectError).
func NewClient(brokers []string, cfg *sarama.Config) (sarama.Client, error) {
	c, err := sarama.NewClient(brokers, cfg)
	if err != nil {
		return nil, ExplainConnectError(err, brokers, cfg)
	}
	return c, nil
}

// ExplainConnectError adds the cause to sarama's bare "client has run out of available brokers
// to talk to". sarama drops some broker errors on the way, notably a SASL handshake refused
// because the listener does not enable sasl.mechanism; this opens one connection per bootstrap
// broker with cfg and reports the first failure. Other errors are returned unchanged.
func ExplainConnectError(err error, brokers []string, cfg *sarama.Config) error {
	if err == nil || err.Error() != sarama.ErrOutOfBrokers.Error() {
		return err // not that error, or sarama kept the cause
	}
	for _, addr := range brokers {
		b := sarama.NewBroker(addr)
		if b.Open(cfg) != nil {
			continue
		}
		_, cerr := b.Connected() // waits for the connection and SASL authentication to finish
		_ = b.Close()
		switch {
		case cerr == nil:
		case errors.Is(cerr, sarama.ErrUnsupportedSASLMechanism):
			return fmt.Errorf("%w: %s: sasl.mechanism %s is not enabled on this listener: %w", err, addr, cfg.Net.SASL.Mechanism, cerr)
		default:
			return fmt.Errorf("%w: %s: %w", err, addr, cerr)
		}
	}
	return err
}
